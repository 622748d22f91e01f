/**
 * The Broker contract, run against both brokers: the in-process one and the NATS JetStream one (the machine's
 * server, test/services.ts; a fresh stream per case, deleted after). Then two NATS brokers as two gateways.
 * Expected values come from what the cases publish.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { InMemoryBroker } from '../../src/realtime/memory-broker.js';
import { NatsBroker, channelToken, type NatsBrokerOptions } from '../../src/realtime/nats-broker.js';
import type { Broker, HistoryPolicy, StreamPosition } from '../../src/realtime/ports.js';
import { resolveStream } from '../../src/realtime/recovery.js';
import { NATS_TEST_URL, skipUnless } from '../services.js';
import { waitFor } from './helpers.js';

const POLICY: HistoryPolicy = { size: 5, ttlMs: 60_000 };

interface Delivered {
  channel: string;
  offset: number;
  epoch: string;
  data: unknown;
}

interface Opened {
  broker: Broker;
  delivered: Delivered[];
  clock: { advance(ms: number): void };
}

function listen(broker: Broker): Delivered[] {
  const delivered: Delivered[] = [];
  broker.onPublication((channel, pub, position) => delivered.push({ channel, offset: pub.offset, epoch: position.epoch, data: pub.data }));
  return delivered;
}

function clock() {
  let t = Date.now();
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

const connections: NatsConnection[] = [];
after(async () => {
  for (const nc of connections) await nc.close();
});

async function natsConnection(name: string): Promise<NatsConnection> {
  const nc = await connect({ servers: NATS_TEST_URL, name });
  connections.push(nc);
  return nc;
}

/** Names of a fresh test cluster's stream and subjects; the stream is deleted with `drop`. */
function freshNames(): Pick<NatsBrokerOptions, 'stream' | 'subjectPrefix'> {
  const cluster = `test_${randomBytes(6).toString('hex')}`;
  return { stream: `PERPX_${cluster}_REALTIME`, subjectPrefix: `perpx.${cluster}.rt` };
}

async function dropStream(nc: NatsConnection, stream: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(stream).catch(() => undefined);
}

const BROKERS = [
  {
    name: 'memory',
    skip: async () => false as const,
    open: async (): Promise<Opened & { dispose(): Promise<void> }> => {
      const c = clock();
      const broker = new InMemoryBroker({ now: c.now });
      return { broker, delivered: listen(broker), clock: c, dispose: () => broker.close() };
    },
  },
  {
    name: 'nats',
    skip: () => skipUnless('nats'),
    open: async (): Promise<Opened & { dispose(): Promise<void> }> => {
      const c = clock();
      const nc = await natsConnection('broker contract');
      const names = freshNames();
      const broker = await NatsBroker.open({ nc, ...names, maxHistorySize: 100, now: c.now });
      return {
        broker,
        delivered: listen(broker),
        clock: c,
        dispose: async () => {
          await broker.close();
          await dropStream(nc, names.stream);
        },
      };
    },
  },
] as const;

for (const kind of BROKERS) {
  describe(`broker contract (${kind.name})`, async () => {
    const skip = await kind.skip();
    const withBroker = (fn: (o: Opened) => Promise<void>) => async () => {
      const opened = await kind.open();
      try {
        await fn(opened);
      } finally {
        await opened.dispose();
      }
    };

    it('numbers a history channel 1, 2, 3 in one epoch and delivers to subscribed channels only', { skip }, withBroker(async ({ broker, delivered }) => {
      await broker.subscribe('user.1');
      const positions: StreamPosition[] = [];
      for (const n of [10, 20, 30]) positions.push(await broker.publish('user.1', { n }, { history: POLICY }));
      assert.deepEqual(positions.map((p) => p.offset), [1, 2, 3]);
      const epoch = positions[0]!.epoch;
      assert.ok(epoch.length > 0);
      assert.ok(positions.every((p) => p.epoch === epoch));
      // Not subscribed: not delivered. Shown by a later publication on a subscribed channel arriving alone after it.
      await broker.publish('user.2', { n: 99 }, { history: POLICY });
      await broker.publish('user.1', { n: 40 }, { history: POLICY });
      await waitFor(() => delivered.length >= 4, 3000, 'four deliveries');
      assert.deepEqual(delivered, [10, 20, 30, 40].map((n, i) => ({ channel: 'user.1', offset: i + 1, epoch, data: { n } })));
    }));

    it('a channel without history carries no position, keeps nothing, and is still delivered', { skip }, withBroker(async ({ broker, delivered }) => {
      await broker.subscribe('book:BTC.usd');
      assert.deepEqual(await broker.publish('book:BTC.usd', { bids: [[1, 2]] }), { offset: 0, epoch: '' });
      await waitFor(() => delivered.length === 1, 3000, 'the delivery');
      assert.deepEqual(delivered, [{ channel: 'book:BTC.usd', offset: 0, epoch: '', data: { bids: [[1, 2]] } }]);
      const h = await broker.history('book:BTC.usd', { limit: 10 });
      assert.deepEqual(h.publications, []);
      assert.equal(h.offset, 0);
    }));

    it('history: limit, since, reverse, top only, and another epoch read from the oldest', { skip }, withBroker(async ({ broker }) => {
      let epoch = '';
      for (let n = 1; n <= 4; n++) epoch = (await broker.publish('ch', { n }, { history: POLICY })).epoch;
      const offsets = (h: { publications: Array<{ offset: number }> }) => h.publications.map((p) => p.offset);
      const all = await broker.history('ch', { limit: 10 });
      assert.deepEqual(all.publications, [1, 2, 3, 4].map((n) => ({ offset: n, data: { n } })));
      assert.deepEqual([all.offset, all.epoch], [4, epoch]);
      assert.deepEqual(offsets(await broker.history('ch', { limit: 2 })), [1, 2]);
      assert.deepEqual(offsets(await broker.history('ch', { limit: 10, since: { offset: 2, epoch } })), [3, 4]);
      assert.deepEqual(offsets(await broker.history('ch', { limit: 10, since: { offset: 4, epoch } })), []);
      assert.deepEqual(offsets(await broker.history('ch', { limit: 2, reverse: true })), [4, 3]);
      assert.deepEqual(offsets(await broker.history('ch', { limit: 10, reverse: true, since: { offset: 3, epoch } })), [2, 1]);
      const top = await broker.history('ch', { limit: 0 });
      assert.deepEqual([top.publications, top.offset, top.epoch], [[], 4, epoch]);
      assert.deepEqual(offsets(await broker.history('ch', { limit: 10, since: { offset: 3, epoch: 'other' } })), [1, 2, 3, 4]);
    }));

    it('history keeps the last `size` publications and drops expired ones, the top stays', { skip }, withBroker(async ({ broker, clock: c }) => {
      for (let n = 1; n <= 7; n++) await broker.publish('ch', { n }, { history: POLICY });
      assert.deepEqual((await broker.history('ch', { limit: 100 })).publications.map((p) => p.offset), [3, 4, 5, 6, 7]);
      c.advance(POLICY.ttlMs + 1);
      await broker.publish('ch', { n: 8 }, { history: POLICY });
      const h = await broker.history('ch', { limit: 100 });
      assert.deepEqual(h.publications, [{ offset: 8, data: { n: 8 } }]);
      assert.equal(h.offset, 8);
    }));

    it('recovery: a client behind gets exactly what it missed; one too far behind is told it was not recovered', { skip }, withBroker(async ({ broker }) => {
      let epoch = '';
      for (let n = 1; n <= 5; n++) epoch = (await broker.publish('ch', { n }, { history: POLICY })).epoch;
      const recover = (offset: number, e = epoch) => resolveStream(broker, { channel: 'ch', recover: true, recoverable: true, offset, epoch: e }, POLICY, 1000);
      const ok = await recover(3);
      assert.ok(!('error' in ok));
      assert.equal(ok.result.recovered, true);
      assert.deepEqual(ok.result.publications, [{ offset: 4, data: { n: 4 } }, { offset: 5, data: { n: 5 } }]);
      assert.deepEqual(ok.position, { offset: 5, epoch });
      for (let n = 6; n <= 9; n++) await broker.publish('ch', { n }, { history: POLICY });
      // Offsets 4 and 5 are gone (size 5 keeps 5..9): the gap cannot be filled.
      const lost = await recover(3);
      assert.ok(!('error' in lost));
      assert.equal(lost.result.recovered, false);
      const otherEpoch = await recover(9, 'elsewhere');
      assert.ok(!('error' in otherEpoch));
      assert.equal(otherEpoch.result.recovered, false);
    }));

    it('after unsubscribe a channel is not delivered any more', { skip }, withBroker(async ({ broker, delivered }) => {
      await broker.subscribe('a');
      await broker.subscribe('b');
      await broker.publish('a', 1, { history: POLICY });
      await waitFor(() => delivered.length === 1, 3000, 'the first delivery');
      await broker.unsubscribe('a');
      await broker.publish('a', 2, { history: POLICY });
      await broker.publish('b', 3, { history: POLICY });
      await waitFor(() => delivered.length >= 2, 3000, 'the delivery on b');
      assert.deepEqual(delivered.map((d) => [d.channel, d.data]), [['a', 1], ['b', 3]]);
    }));
  });
}

describe('NATS broker across gateways', async () => {
  const skip = await skipUnless('nats');

  it('a publication through gateway 1 is delivered and recoverable on gateway 2; a restarted publisher continues', { skip }, async () => {
    const names = freshNames();
    const nc1 = await natsConnection('gateway 1');
    const nc2 = await natsConnection('gateway 2');
    const gateway1 = await NatsBroker.open({ nc: nc1, ...names, maxHistorySize: 100 });
    const gateway2 = await NatsBroker.open({ nc: nc2, ...names, maxHistorySize: 100 });
    const restarted: NatsBroker[] = [];
    try {
      const on2 = listen(gateway2);
      await gateway2.subscribe('user.7');
      const first = await gateway1.publish('user.7', { fill: 1 }, { history: POLICY });
      const second = await gateway1.publish('user.7', { fill: 2 }, { history: POLICY });
      await waitFor(() => on2.length === 2, 3000, 'deliveries on gateway 2');
      assert.deepEqual(on2, [
        { channel: 'user.7', offset: 1, epoch: first.epoch, data: { fill: 1 } },
        { channel: 'user.7', offset: 2, epoch: first.epoch, data: { fill: 2 } },
      ]);
      assert.equal(second.epoch, first.epoch);
      // A client that saw offset 1 through gateway 1 reconnects to gateway 2 and recovers offset 2.
      const rec = await resolveStream(gateway2, { channel: 'user.7', recover: true, offset: 1, epoch: first.epoch }, POLICY, 1000);
      assert.ok(!('error' in rec));
      assert.equal(rec.result.recovered, true);
      assert.deepEqual(rec.result.publications, [{ offset: 2, data: { fill: 2 } }]);

      // The publisher restarts (a new broker on a new connection): offsets and epoch continue from the stream.
      await gateway1.close();
      const again = await NatsBroker.open({ nc: await natsConnection('gateway 1 again'), ...names, maxHistorySize: 100 });
      restarted.push(again);
      assert.deepEqual(await again.publish('user.7', { fill: 3 }, { history: POLICY }), { offset: 3, epoch: first.epoch });
      await waitFor(() => on2.length === 3, 3000, 'the third delivery');
      assert.deepEqual((await gateway2.history('user.7', { limit: 10 })).publications.map((p) => p.offset), [1, 2, 3]);
    } finally {
      for (const b of [gateway1, gateway2, ...restarted]) await b.close();
      await dropStream(nc1, names.stream);
    }
  });

  it('channel names with subject characters map to distinct single tokens', () => {
    const names = ['a.b', 'a*b', 'a>b', 'a b', 'a~2eb', 'a_b-c:d', 'ünï'];
    const tokens = names.map(channelToken);
    assert.equal(new Set(tokens).size, names.length);
    for (const t of tokens) assert.match(t, /^[A-Za-z0-9_:~-]+$/);
    assert.equal(channelToken('futures-perp:user-1'), 'futures-perp:user-1');
  });
});
