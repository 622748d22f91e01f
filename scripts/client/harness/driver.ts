// Calls every public method of the public client's gateway classes (ExchangeRestGateway, AuthRestGateway) and of
// the bot SDK's Gateway / WalletAccount / ApiKeyAccount against perpx through the recording proxy (PERPX_PROXY).
// Two deterministic throwaway wallets (A trades, B is the counterparty). Each step tells the proxy which client
// method it calls; results.json lists every method with ok / error.
import * as sdk from '@evedex/exchange-bot-sdk';
import * as api from '@evedex/exchange-api';
import * as crypto from '@evedex/exchange-crypto';
import axios from 'axios';
import { ethers } from 'ethers';
import { writeFileSync } from 'node:fs';
import WebSocket from 'ws';

const PROXY = process.env.PERPX_PROXY ?? 'http://127.0.0.1:8080';
const CHAIN = '16182';
const INSTRUMENT = 'BTCUSDT';
/** Throwaway keys: keccak of a fixed label (the replay derives the same). */
export const walletKey = (label: string) => ethers.id(`perpx-client-proof:${label}`);

const results: Array<{ method: string; ok: boolean; error?: string }> = [];

async function step<T>(method: string, fn: () => Promise<T>): Promise<T | undefined> {
  await axios.post(`${PROXY}/__record/call`, { name: method });
  try {
    const r = await fn();
    results.push({ method, ok: true });
    return r;
  } catch (e: any) {
    const status = e?.response?.status;
    const data = e?.response?.data?.response?.data ?? e?.response?.data;
    results.push({ method, ok: false, error: `${status ?? ''} ${e?.message ?? e} ${data ? JSON.stringify(data).slice(0, 300) : ''}`.trim() });
    console.error(`✖ ${method}: ${results.at(-1)!.error}`);
    return undefined;
  }
}

function gateway() {
  return new sdk.Gateway({
    exchangeURI: PROXY, authURI: PROXY,
    centrifuge: { uri: `${PROXY.replace(/^http/, 'ws')}/connection/websocket`, prefix: 'futures-perp-dev', websocket: WebSocket },
  });
}

/** Resolves with the first value a client signal emits (a websocket event), or fails after `ms`. */
function next<T>(signal: api.utils.Signal<T>, what: string, ms = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
    signal((v: T) => { clearTimeout(timer); resolve(v); });
  });
}

const Side = crypto.utils.Side;
const limit = (side: crypto.utils.Side, quantity: string, limitPrice: string) => ({
  instrument: INSTRUMENT, side, leverage: 10, quantity, limitPrice, postOnly: false,
});

async function main() {
  const walletA = new sdk.utils.Wallet({ privateKey: walletKey('A'), chain: CHAIN });
  const walletB = new sdk.utils.Wallet({ privateKey: walletKey('B'), chain: CHAIN });
  const gA = gateway();
  const gB = gateway();

  // ---- sign in (AuthRestGateway.getNonce, signInSiwe; ExchangeRestGateway.me) ----
  const A = (await step('Gateway.signInWalletAccount', () => gA.signInWalletAccount(walletA)))!;
  const siwe = await (async () => {
    const nonce = (await gB.authGateway.getNonce()).nonce;
    const address = await walletB.getAddress();
    const signed = await crypto.signAuthMessage(walletB, { nonce, address, chainId: CHAIN });
    return { wallet: address, message: signed.message, signature: signed.signature, nonce };
  })();
  const B = (await step('Gateway.signInSessionAccount', () => gB.signInSessionAccount(siwe)))!;
  const exA = A.exchangeGateway;
  const authA = A.authGateway;
  const bearer = (g: sdk.Gateway) => ({ Authorization: `Bearer ${(g.authGateway.getSession() as api.utils.JWT).accessToken}` });
  await step('(setup) faucet A', () => axios.post(`${PROXY}/api/user/faucet`, {}, { headers: bearer(gA) }));
  await step('(setup) faucet B', () => axios.post(`${PROXY}/api/user/faucet`, {}, { headers: bearer(gB) }));

  // ---- websocket: the SDK's listeners (REST snapshots recorded; the channels themselves are piped through) ----
  await step('Gateway.wsConnect', async () => gA.wsConnect());
  await step('Gateway.listenMatcherState', () => gA.listenMatcherState());
  await step('Gateway.listenInstrumentState', () => gA.listenInstrumentState());
  await step('Gateway.listenFundingRateState', () => gA.listenFundingRateState());
  await step('Gateway.listenOrderBook', () => gA.listenOrderBook(INSTRUMENT));
  await step('Gateway.listenOrderBookBest', () => gA.listenOrderBookBest(INSTRUMENT, 100));
  await step('Gateway.listenTrades', () => gA.listenTrades(INSTRUMENT));
  const balance = A.getBalance();
  await step('Balance.listen', () => balance.listen());

  // ---- market data (SDK Gateway and ExchangeRestGateway) ----
  await step('Gateway.fetchInstruments', () => gA.fetchInstruments());
  await step('Gateway.fetchInstrumentsWithMetrics', () => gA.fetchInstrumentsWithMetrics());
  await step('Gateway.fetchCoins', () => gA.fetchCoins());
  await step('Gateway.fetchMarketInfo', () => gA.fetchMarketInfo());
  await step('Gateway.fetchMarketDepth', () => gA.fetchMarketDepth({ instrument: INSTRUMENT, maxLevel: 10 }));
  await step('Gateway.fetchTrades', () => gA.fetchTrades({ instrument: INSTRUMENT }));
  await step('ExchangeRestGateway.getTrades', () => exA.getTrades({ instrument: INSTRUMENT }));
  await step('ExchangeRestGateway.getMarketDepth', () => exA.getMarketDepth({ instrument: INSTRUMENT, maxLevel: 5, roundPrice: api.utils.OrderBookRoundPrices.One }));

  // ---- auth ----
  await step('AuthRestGateway.me', () => authA.me());
  await step('AuthRestGateway.myServices', () => authA.myServices());
  await step('AuthRestGateway.refresh', async () => {
    const session = await authA.refresh(authA.getSession() as api.utils.RefreshedJWT);
    authA.setSession(session.token);
    return session;
  });
  await step('ExchangeRestGateway.getDxFeedAuthToken', () => exA.getDxFeedAuthToken());

  // ---- account reads (WalletAccount = ApiKeyAccount methods with a session) ----
  await step('WalletAccount.fetchMe', () => A.fetchMe());
  await step('WalletAccount.fetchAvailableBalance', () => A.fetchAvailableBalance());
  await step('WalletAccount.fetchPower', () => A.fetchPower({ instrument: INSTRUMENT }));
  await step('ExchangeRestGateway.getWalletBalances', () => exA.getWalletBalances());
  await step('ExchangeRestGateway.getFunding', () => exA.getFunding());
  await step('WalletAccount.updatePosition', () => A.updatePosition({ instrument: INSTRUMENT, leverage: 10 }));

  // ---- resting orders: v2 through the SDK, v1 through the gateway ----
  const o1 = await step('WalletAccount.createLimitOrderV2', () => A.createLimitOrderV2(limit(Side.Buy, '0.01', '97000')));
  const batch = await step('WalletAccount.batchCreateLimitOrderV2', () => A.batchCreateLimitOrderV2(INSTRUMENT, [limit(Side.Buy, '0.01', '96500'), limit(Side.Buy, '0.01', '96000')]));
  const v1 = await step('ExchangeRestGateway.createLimitOrder', async () => exA.createLimitOrder(await crypto.signLimitOrder(walletA, { ...limit(Side.Buy, '0.01', '95500'), id: sdk.utils.generateOrderIdV2() })));
  await step('ExchangeRestGateway.batchCreateLimitOrder', async () => exA.batchCreateLimitOrder(INSTRUMENT, [
    await crypto.signLimitOrder(walletA, { ...limit(Side.Buy, '0.01', '95000'), id: sdk.utils.generateOrderIdV2() }),
  ]));
  const stop = await step('WalletAccount.createStopLimitOrderV2', () => A.createStopLimitOrderV2({ instrument: INSTRUMENT, side: Side.Buy, leverage: 10, quantity: '0.01', limitPrice: '104000', stopPrice: '103000' }));
  await step('ExchangeRestGateway.createStopLimitOrder', async () => exA.createStopLimitOrder(await crypto.signStopLimitOrder(walletA, {
    instrument: INSTRUMENT, side: Side.Buy, leverage: 10, quantity: '0.01', limitPrice: '105000', stopPrice: '104800', id: sdk.utils.generateOrderIdV2(),
  })));
  const id1 = o1?.id;
  const batchIds = (batch ?? []).filter((r): r is api.utils.SuccessfulLimitOrderBatchCreateResult => r.success).map((r) => r.orderId);
  if (id1) await step('WalletAccount.replaceLimitOrder', () => A.replaceLimitOrder({ orderId: id1, quantity: '0.02', limitPrice: '97100', postOnly: false }));
  if (id1) await step('WalletAccount.batchReplaceLimitOrder', () => A.batchReplaceLimitOrder([{ orderId: id1, quantity: '0.02', limitPrice: '97200', postOnly: false }]));
  if (batchIds[0]) await step('WalletAccount.batchReplaceInstrumentLimitOrder', () => A.batchReplaceInstrumentLimitOrder(INSTRUMENT, [{ orderId: batchIds[0], quantity: '0.01', limitPrice: '96600', postOnly: false }]));
  if (stop?.id) await step('WalletAccount.replaceStopLimitOrder', () => A.replaceStopLimitOrder({ orderId: stop.id, quantity: '0.01', limitPrice: '104500', stopPrice: '103500', postOnly: false }));
  if (id1) await step('ExchangeRestGateway.getOrder', () => exA.getOrder(id1));
  await step('WalletAccount.fetchOrders', () => A.fetchOrders({ limit: 20 }));
  await step('ExchangeRestGateway.getOrders', () => exA.getOrders({ limit: 20, instrument: INSTRUMENT }, true));
  await step('WalletAccount.fetchOpenOrders', () => A.fetchOpenOrders());
  if (id1) await step('WalletAccount.cancelOrder', () => A.cancelOrder({ orderId: id1 }));
  if (batchIds.length) await step('WalletAccount.massCancelUserOrdersById', () => A.massCancelUserOrdersById({ orderIds: batchIds }));
  await step('WalletAccount.massCancelUserOrders', () => A.massCancelUserOrders({ instrument: INSTRUMENT }));

  // ---- a trade: B rests asks, A takes them (market v2, market v1) ----
  await step('(counterparty) B createLimitOrderV2', async () => gB.exchangeGateway.createLimitOrderV2(await crypto.signLimitOrder(walletB, { ...limit(Side.Sell, '0.1', '100000'), id: sdk.utils.generateOrderIdV2() })));
  const events = {
    order: next(balance.onOrderUpdate, 'order event'), fill: next(balance.onOrderFillsUpdate, 'fill event'),
    position: next(balance.onPositionUpdate, 'position event'), trade: next(gA.onTrade, 'trade event'),
  };
  await step('WalletAccount.createMarketOrderV2', () => A.createMarketOrderV2({ instrument: INSTRUMENT, side: Side.Buy, leverage: 10, timeInForce: crypto.utils.TimeInForce.IOC, cashQuantity: '2000' }));
  await step('ExchangeRestGateway.createMarketOrder', async () => exA.createMarketOrder(await crypto.signMarketOrder(walletA, {
    instrument: INSTRUMENT, side: Side.Buy, leverage: 10, timeInForce: crypto.utils.TimeInForce.IOC, cashQuantity: '2000', id: sdk.utils.generateOrderIdV2(),
  })));
  await step('Balance.onOrderUpdate (websocket)', () => events.order);
  await step('Balance.onOrderFillsUpdate (websocket)', () => events.fill);
  await step('Balance.onPositionUpdate (websocket)', () => events.position);
  await step('Gateway.onTrade (websocket)', () => events.trade);
  await step('Balance.getPositionList', async () => {
    if (balance.getPositionList().length === 0) throw new Error('no position in the listened balance');
  });
  await step('WalletAccount.fetchPositions', () => A.fetchPositions());
  await step('ExchangeRestGateway.getPositions', () => exA.getPositions(true));

  // ---- TpSl on the position ----
  const tpsl = await step('WalletAccount.createTpSl', () => A.createTpSl({ instrument: INSTRUMENT, type: crypto.utils.TpSlType.TakeProfit, side: Side.Sell, quantity: '0.01', price: '105000', order: null }));
  if (tpsl?.id) {
    await step('WalletAccount.updateTpSl', async () => A.updateTpSl({
      id: tpsl.id, ...(await crypto.signTpSl(walletA, { instrument: INSTRUMENT, type: crypto.utils.TpSlType.TakeProfit, side: Side.Sell, quantity: '0.02', price: '106000', order: null })),
    }));
    await step('WalletAccount.fetchTpSlList', () => A.fetchTpSlList({ limit: 10 }));
    await step('ExchangeRestGateway.getTpSl', () => exA.getTpSl({ limit: 10, instrument: INSTRUMENT }));
    await step('WalletAccount.cancelTpSl', () => A.cancelTpSl({ instrument: INSTRUMENT, id: tpsl.id }));
  }

  // ---- closing: v2 through the SDK, v1 through the gateway ----
  await step('WalletAccount.createClosePositionOrderV2', () => A.createClosePositionOrderV2({ instrument: INSTRUMENT, leverage: 10, quantity: '0.01' }));
  await step('ExchangeRestGateway.closePosition', async () => exA.closePosition(await crypto.signPositionCloseOrder(walletA, { instrument: INSTRUMENT, leverage: 10, quantity: '0.01', id: sdk.utils.generateOrderIdV2() })));

  // ---- funds ----
  await step('WalletAccount.createWithdraw', async () => A.createWithdraw({ recipient: await walletA.getAddress(), amount: '10' }));
  await step('ExchangeRestGateway.getTransfers', () => exA.getTransfers({ limit: 10 }));

  // ---- an API key (perpx's own route; the client only uses one) and the ApiKeyAccount ----
  const key = await step('(setup) create API key', async () => (await axios.post(`${PROXY}/api/user/api-key`, { name: 'client-proof' }, { headers: bearer(gA) })).data as { apiKey: string });
  if (key) {
    const gK = gateway();
    const K = await step('Gateway.createApiKeyAccount', () => gK.createApiKeyAccount({ apiKey: key.apiKey }));
    if (K) {
      await step('ApiKeyAccount.fetchMe', () => K.fetchMe());
      await step('ApiKeyAccount.fetchAvailableBalance', () => K.fetchAvailableBalance());
      await step('ApiKeyAccount.fetchPower', () => K.fetchPower({ instrument: INSTRUMENT }));
      await step('ApiKeyAccount.fetchPositions', () => K.fetchPositions());
      await step('ApiKeyAccount.fetchOrders', () => K.fetchOrders({ limit: 5 }));
      await step('ApiKeyAccount.fetchOpenOrders', () => K.fetchOpenOrders());
      await step('ApiKeyAccount.fetchTpSlList', () => K.fetchTpSlList({ limit: 5 }));
    }
  }
  await step('(session) B.fetchMe', () => B.fetchMe());

  await step('Balance.unListen', () => balance.unListen());
  await step('Gateway.closeWsConnection', async () => gA.closeWsConnection());

  writeFileSync('results.json', `${JSON.stringify(results, null, 1)}\n`);
  const failed = results.filter((r) => !r.ok);
  console.error(`${results.length - failed.length}/${results.length} calls succeeded`);
  process.exit(failed.length ? 2 : 0);
}

main().catch((e) => {
  console.error(e);
  writeFileSync('results.json', `${JSON.stringify(results, null, 1)}\n`);
  process.exit(1);
});
