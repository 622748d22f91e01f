/**
 * What every chaos test checks once the cluster is whole again, against oracles outside the running roles:
 * - the JetStream command log replayed into a fresh engine (the code recovery uses) gives the state hash the
 *   leader reports;
 * - every command a client got a 2xx for is in that log and shows in the engine through the API;
 * - the projector's tables equal those of a fresh projector that rebuilt them from the log from zero.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { ensureDatabase } from '../../../scripts/cluster/cluster-resources.js';
import { RoleProcess } from '../../../scripts/cluster/role-process.js';
import { createEngine } from '../../../src/engine/engine.js';
import { readCommandStream } from '../../../src/journal/jetstream-journal.js';
import { clusterNames } from '../../../src/journal/jetstream-names.js';
import { applyJournalEntry } from '../../../src/sequencer/recovery.js';
import { http } from '../../app/client.js';
import { until, withDatabase, type ChaosCluster } from './chaos-cluster.js';
import { tally, type SignedLoad } from './signed-load.js';

export interface ReplayedLog {
  seq: number;
  stateHash: string;
  placed: Set<string>;
  cancelled: Set<string>;
}

/** Reads the whole command stream and applies it to a fresh engine. */
export async function replayLog(chaos: ChaosCluster): Promise<ReplayedLog> {
  const nc = await connect({ servers: chaos.nats.url });
  try {
    const jsm = await jetstreamManager(nc);
    const engine = createEngine();
    const placed = new Set<string>();
    const cancelled = new Set<string>();
    for await (const entry of readCommandStream(nc, jsm, clusterNames(chaos.name).commandStream, 0)) {
      const c = entry.command as { kind: string; order?: { id: string }; orderId?: string };
      if (c.kind === 'order.place' && c.order) placed.add(c.order.id);
      if (c.kind === 'order.cancel' && c.orderId) cancelled.add(c.orderId);
      applyJournalEntry(engine, entry);
    }
    return { seq: engine.seq, stateHash: engine.stateHash(), placed, cancelled };
  } finally {
    await nc.close();
  }
}

/** The leader's checkpoint equals the replay of the log, which holds every acknowledged command. */
export async function assertLogMatchesEngine(chaos: ChaosCluster, load: SignedLoad): Promise<ReplayedLog> {
  const checkpoint = await until('a checkpoint from the leader', () => chaos.checkpoint(), () => true, 30_000);
  const log = await replayLog(chaos);
  assert.equal(log.seq, checkpoint.seq, 'the leader is at the end of the log');
  assert.equal(log.stateHash, checkpoint.stateHash, 'the leader\'s state equals a clean replay of the log');
  const lostPlaces = load.acked('place').filter((o) => !log.placed.has(o.orderId));
  assert.deepEqual(lostPlaces, [], 'every acknowledged order is in the log');
  const lostCancels = load.acked('cancel').filter((o) => !log.cancelled.has(o.orderId));
  assert.deepEqual(lostCancels, [], 'every acknowledged cancel is in the log');
  return log;
}

/** Each acknowledged order, through both gateways in turn: live state and history know it; acked cancels hold. */
export async function assertAckedVisible(chaos: ChaosCluster, load: SignedLoad): Promise<void> {
  const urls = chaos.gatewayUrls();
  const cancelled = new Set(load.acked('cancel').map((o) => o.orderId));
  const acked = load.acked('place');
  for (const [i, o] of acked.entries()) {
    const bot = load.bots[o.bot];
    const live = await http(urls[i % urls.length], 'GET', `/api/order/${encodeURIComponent(o.orderId)}`, undefined, { authorization: `Bearer ${bot.accessToken}` });
    assert.equal(live.status, 200, `acknowledged order ${o.orderId} in the engine: ${JSON.stringify(live.body)}`);
    const status = (live.body as { status: string }).status;
    // A cancel of an order that finished meanwhile (filled) is answered 200 and changes nothing (engine rules).
    if (cancelled.has(o.orderId)) assert.ok(!OPEN_STATUSES.includes(status), `acknowledged cancel of ${o.orderId}: ${status}`);
  }
  for (const [b, bot] of load.bots.entries()) {
    const mine = acked.filter((o) => o.bot === b).map((o) => o.orderId);
    for (let i = 0; i < mine.length; i += 40) {
      const chunk = mine.slice(i, i + 40);
      const query = chunk.map((id) => `id=${encodeURIComponent(id)}`).join('&');
      const hist = await until('history of a bot', () => bot.get(`/api/order?limit=50&${query}`), (r) => r.status === 200, 30_000);
      const ids = new Set((hist.body as { list: Array<{ id: string }> }).list.map((x) => x.id));
      assert.deepEqual(chunk.filter((id) => !ids.has(id)), [], 'every acknowledged order is in the history');
    }
  }
}

const OPEN_STATUSES = ['NEW', 'PARTIALLY_FILLED'];

const COMPARED_TABLES: Record<string, string> = {
  orders: 'user_id, id', fills: 'execution_id, user_id', trades: 'seq, ev', transfers: 'user_id, id', position_history: 'user_id, id',
};

/**
 * Starts a second projector on a fresh database, lets it rebuild the read model from the log from zero, and
 * compares its tables with the cluster projector's once both reached `seq`.
 */
export async function assertHistoryRebuilds(chaos: ChaosCluster, seq: number): Promise<void> {
  const database = `${chaos.readDatabase}_rebuilt`;
  await ensureDatabase(chaos.pgAdminUrl, database);
  const dir = join(chaos.dataDir, 'projector-rebuild');
  mkdirSync(dir, { recursive: true });
  const rebuilt = withDatabase(chaos.pgAdminUrl, database);
  const proc = new RoleProcess('projector', 'projector-rebuild', { ...chaos.roleEnv, READ_STORE_URL: rebuilt, DATA_DIR: dir, PORT: '0' });
  try {
    await proc.ready;
    const original = chaos.roleEnv.READ_STORE_URL;
    for (const url of [original, rebuilt]) {
      await until(`the read model at ${url} reaches seq ${seq}`, () => lastSeq(url), (s) => s >= seq, 60_000);
    }
    for (const [table, order] of Object.entries(COMPARED_TABLES)) {
      const [a, b] = [await rows(original, table, order), await rows(rebuilt, table, order)];
      assert.ok(a.length > 0 || table !== 'orders', 'the history holds orders');
      assert.deepEqual(a, b, `table ${table}: the projector's rows equal a clean rebuild's`);
    }
  } finally {
    await proc.stop(10_000);
  }
}

async function query<T>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

const lastSeq = async (url: string) => Number((await query<{ last_seq: string }>(url, 'SELECT last_seq FROM projector_meta WHERE id = 1'))[0]?.last_seq ?? 0);
const rows = (url: string, table: string, order: string) => query(url, `SELECT * FROM ${table} ORDER BY ${order}`);

/**
 * What every chaos test checks after its kills: no 500 and no dropped connection; every acknowledged command
 * in the log and visible; the state equal to a clean replay; the history equal to a clean rebuild.
 */
export async function assertNothingLost(chaos: ChaosCluster, load: SignedLoad): Promise<ReplayedLog> {
  const fatal = load.outcomes.filter((o) => o.status === 0 || (o.status >= 500 && o.status !== 503));
  assert.deepEqual(fatal, [], `no 500 and no lost connection: ${JSON.stringify(tally(load.outcomes))}`);
  const log = await assertLogMatchesEngine(chaos, load);
  await assertAckedVisible(chaos, load);
  await assertHistoryRebuilds(chaos, log.seq);
  return log;
}
