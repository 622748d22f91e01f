/**
 * The fuzzed exchange: a real started exchange (test/app/client.ts) with signed-in users holding orders,
 * a position, a TpSl, API keys, a trade signal, an OAuth integration and spare sessions, so that requests can
 * name things that exist (and things of another user). Background movers are off (no bots, no index feed, no
 * funding, withdrawals never settle during the run): between two requests only the fuzz changes the state.
 */
import assert from 'node:assert/strict';
import { Bot, http, ok, startTestExchange, type TestExchange } from '../client.js';
import { SCOPES } from '../../../src/auth/types.js';
import type { SignedWorld } from './signed.js';
import { uuid, type Known, type Rng } from './values.js';

export interface World {
  X: TestExchange;
  /** The main user (signs most bodies), another funded user, and one signed in with no money. */
  A: Bot;
  B: Bot;
  C: Bot;
  apiKeyA: string;
  /** Refresh tokens of spare sessions of D (refresh and logout may revoke them). */
  refreshTokens: string[];
  /** Access tokens of those sessions: logout is sent with these, never with A's. */
  spareAccessTokens: string[];
  known(op: string): Known;
  signed(signer: Bot): SignedWorld;
  /** The journal's last seq and the engine's state hash, read from the running exchange. */
  probe(): { seq: number; stateHash: string };
}

export async function startWorld(): Promise<World> {
  const X = await startTestExchange({ CHAIN_DELAY_MS: '3600000' });
  try {
    return await populate(X);
  } catch (err) {
    await X.stop();
    throw err;
  }
}

async function populate(X: TestExchange): Promise<World> {
  const [A, B, C, D] = await Promise.all([0, 1, 2, 3].map(() => new Bot(X.url).signIn()));
  await A.faucet();
  await B.faucet();
  const opTok = { 'x-operator-token': X.ex.operatorToken };

  const ordersA: string[] = [];
  const ordersB: string[] = [];
  const stopsA: string[] = [];
  for (const p of ['90000', '91000', '92000']) ordersA.push(ok(await A.limit({ side: 'BUY', quantity: '0.01', limitPrice: p }), 'A rests').id);
  for (const p of ['90500', '91500']) ordersB.push(ok(await B.limit({ side: 'BUY', quantity: '0.01', limitPrice: p }), 'B rests').id);
  stopsA.push(ok(await A.stopLimit({ side: 'SELL', quantity: '0.01', limitPrice: '95000', stopPrice: '96000' }), 'A stop').id);
  // A position for A (B sells to A), with a stop-loss on it.
  ok(await B.limit({ side: 'SELL', quantity: '0.02', limitPrice: '100000' }), 'B offers');
  ok(await A.limit({ side: 'BUY', quantity: '0.02', limitPrice: '100000' }), 'A takes');
  const tp = ok(await A.post('/api/tpsl/BTCUSDT', await A.tpslBody('BTCUSDT', { type: 'stop-loss', side: 'SELL', quantity: '0.01', price: '80000' })), 'tpsl');
  const tpslIds = [String(tp.id)];
  const apiKeyA = ok(await A.post('/api/user/api-key', { name: 'fuzz auth' }), 'key').apiKey as string;
  const target = ok(await A.post('/api/user/api-key', { name: 'fuzz target' }), 'target key');
  const keyIds = [String(target.id)];
  const signal = ok(await A.post('/api/trade/signal', { instrument: 'BTCUSDT', side: 'BUY', entryPrice: '100000', takeProfit: '110000', stopLoss: '90000', leverage: 2 }), 'signal');
  const reg = ok(await http(X.url, 'POST', '/api/admin/oauth/integrations', { name: 'Fuzz', redirectUri: 'https://fuzz.example.com/cb', scopes: SCOPES }, opTok), 'integration');
  const integrationId = String(reg.integration.id);
  const refreshTokens: string[] = [];
  const spareAccessTokens: string[] = [];
  for (let i = 0; i < 3; i++) {
    const d = await new Bot(X.url, D.wallet).signIn();
    refreshTokens.push(d.refreshToken);
    spareAccessTokens.push(d.accessToken);
  }
  for (const id of [...ordersA, ...ordersB, ...stopsA, ...keyIds, ...tpslIds]) assert.ok(id.length > 0, 'setup ids');

  const used = [...ordersA, ...stopsA];
  const byOp = (op: string) => ({
    byName(name: string, r: Rng): unknown {
      switch (name) {
        case 'instrument': case 'pairId': return r.pick(['BTCUSDT', 'BTCUSDT', 'ETHUSDT']);
        case 'orderId': return r.chance(0.8) ? r.pick(ordersA) : r.pick(ordersB);
        case 'orderIds': return [r.pick(ordersA), r.pick(ordersB)];
        case 'userId': case 'authId': return r.chance(0.8) ? A.userId : B.userId;
        case 'exchangeId': return String(r.chance(0.8) ? A.exchangeId : B.exchangeId);
        case 'wallet': return r.chance(0.5) ? A.address : D.address;
        case 'apiKeyId': return r.pick(keyIds);
        case 'integrationId': return integrationId;
        case 'refreshToken': return r.pick(refreshTokens);
        case 'target': return r.pick([B.address, A.address, String(B.exchangeId)]);
        case 'requestId': return uuid(r);
        case 'id':
          if (op.includes('/api/tpsl/')) return r.pick(tpslIds);
          if (op.includes('/api/trade/signal/')) return String(signal.id);
          return undefined;
        default: return undefined;
      }
    },
  });

  return {
    X, A, B, C, apiKeyA, refreshTokens, spareAccessTokens,
    known: byOp,
    signed: (bot) => ({
      url: X.url,
      bot,
      orderIds: (r) => (r.chance(0.85) ? r.pick(ordersA) : r.pick(ordersB)),
      stopOrderIds: (r) => (r.chance(0.85) ? r.pick(stopsA) : r.pick(ordersA)),
      tpslIds: (r) => r.pick(tpslIds),
      usedOrderId: (r) => r.pick(used),
      nonce: async () => ok(await http(X.url, 'GET', '/auth/nonce'), 'nonce').nonce as string,
      consentRequestId: async () => ok(await http(X.url, 'GET', `/api/oauth?integrationId=${integrationId}&scopes=read`), 'consent').requestId as string,
    }),
    probe: () => ({ seq: X.ex.sequencer.seq, stateHash: X.ex.engine.stateHash() }),
  };
}
