/**
 * The cluster end to end through its public interface: orders through one gateway are read back at once on it
 * (follower and projector read-your-writes), reach the other gateway's websocket live, and a client that
 * reconnects to the first gateway recovers every publication; followers, projector and leader agree.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Centrifuge, type Subscription } from 'centrifuge';
import WebSocket from 'ws';
import { Bot, eventually, ok } from '../app/client.js';
import { skipUnless } from '../services.js';
import { startTestCluster, type TestCluster } from './test-cluster.js';

const skip = (await skipUnless('nats')) || (await skipUnless('postgres'));

describe('cluster roles: engine, two gateways, projector', { skip }, () => {
  let C: TestCluster;
  before(async () => {
    C = await startTestCluster();
  });
  after(async () => {
    await C?.stop();
  });

  test('an order through gateway 1 is read back at once there, in live state and in history', async () => {
    const [g1] = C.gateways;
    const bot = await new Bot(g1.url).signIn();
    await bot.faucet();
    const order = ok(await bot.limit({ side: 'BUY', quantity: '0.001', limitPrice: 95000 }), 'limit order') as { id: string };
    const open = await bot.openOrders();
    assert.ok(open.some((o) => o.id === order.id), 'the open order is in the follower right after the reply');
    const hist = ok(await bot.get(`/api/order?id=${encodeURIComponent(order.id)}`), 'order history') as { list: Array<{ id: string }> };
    assert.deepEqual(hist.list.map((o) => o.id), [order.id], 'history holds the order right after the reply');
  });

  test('gateway 2 sees live every event of an order placed through gateway 1; a reconnect to gateway 1 recovers them', async () => {
    const [g1, g2] = C.gateways;
    const bot = await new Bot(g1.url).signIn();
    await bot.faucet();
    const channel = `${g2.channelPrefix}order-${bot.exchangeId}`;
    const seen: Array<{ offset: number; id: string; status: string }> = [];
    const connectTo = (url: string, since?: { offset: number; epoch: string }) => {
      const client = new Centrifuge(url, { websocket: WebSocket });
      const sub: Subscription = client.newSubscription(channel, {
        data: { accessToken: bot.accessToken }, recoverable: true, positioned: true, ...(since && { since }),
      });
      sub.on('publication', (ctx) => {
        const d = ctx.data as { id: string; status: string };
        seen.push({ offset: Number(ctx.offset), id: d.id, status: d.status });
      });
      const subscribed = new Promise<{ epoch: string; recovered: boolean }>((resolve, reject) => {
        sub.once('subscribed', (ctx) => resolve({ epoch: ctx.streamPosition?.epoch ?? '', recovered: ctx.wasRecovering && ctx.recovered }));
        sub.once('error', (ctx) => reject(new Error(JSON.stringify(ctx.error))));
      });
      sub.subscribe();
      client.connect();
      return { client, subscribed };
    };
    const first = connectTo(g2.wsUrl);
    const { epoch } = await first.subscribed;
    const order = ok(await bot.limit({ side: 'BUY', quantity: '0.001', limitPrice: 95000 }), 'limit order') as { id: string };
    await eventually(async () => seen.filter((p) => p.id === order.id).length, (n) => n > 0, 'the new order on gateway 2');
    first.client.disconnect();
    const lastOffset = seen.at(-1)!.offset;

    // While no client listens: a cancel through gateway 1; then the client comes back on gateway 1 and recovers it.
    ok(await bot.del(`/api/order/${encodeURIComponent(order.id)}`), 'cancel');
    const second = connectTo(g1.wsUrl, { offset: lastOffset, epoch });
    const { recovered } = await second.subscribed;
    try {
      assert.equal(recovered, true, 'recovered from the stream position on the other gateway');
      await eventually(async () => seen.filter((p) => p.id === order.id).map((p) => p.status), (s) => s.includes('CANCELLED'), 'the cancel, recovered');
      const offsets = seen.map((p) => p.offset);
      assert.deepEqual(offsets, offsets.map((_, i) => offsets[0] + i), 'contiguous offsets: nothing missing, nothing twice');
    } finally {
      second.client.disconnect();
    }
  });

  test('followers, projector and leader agree on the state', async () => {
    const seq = C.engine.engine.seq;
    for (const g of C.gateways) await g.follower.waitFor(seq, 10_000);
    await C.projector.whenCaughtUp(seq);
    const hash = C.engine.engine.stateHash();
    for (const g of C.gateways) assert.equal(g.follower.engine.stateHash(), hash);
    assert.equal(C.projector.follower.engine.stateHash(), hash);
    assert.equal(C.projector.projectedSeq(), seq);
  });
});
