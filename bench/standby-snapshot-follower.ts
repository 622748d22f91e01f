// Child process of bench/standby-snapshot.bench.ts: a hot standby (engine follower on the cluster's command
// log) writing the snapshots (src/cluster/standby-snapshots.ts), as a second engine machine would.
// argv: <cluster> <snapshot every N commands>. Prints "ready" once following, then its stats on SIGTERM.
import { connect } from '@nats-io/transport-node';
import pino from 'pino';
import { openEngineFollower } from '../src/cluster/follower.js';
import { StandbySnapshotWriter } from '../src/cluster/standby-snapshots.js';
import { createEngine, restoreEngine } from '../src/engine/engine.js';
import { openObjectStoreSnapshots } from '../src/journal/object-store-snapshots.js';

const [cluster, every] = process.argv.slice(2);
const log = pino({ level: process.env.STANDBY_LOG ?? 'warn' }, pino.destination(2));
const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', name: 'bench standby' });
const store = await openObjectStoreSnapshots({ nc, cluster, writer: 'bench standby' });
const writer = new StandbySnapshotWriter({ store, everyCommands: Number(every), everyMs: 0, logger: log });
const follower = await openEngineFollower({
  nc, cluster, snapshots: store, createEngine, restoreEngine, logger: log,
  onApplied: (engine, entry) => writer.onApplied(engine, entry),
});
console.log('ready');
process.on('SIGTERM', () => {
  void (async () => {
    await follower.close();
    await writer.close();
    await store.close();
    await nc.close();
    console.log(JSON.stringify({ seq: follower.seq, ...writer.stats }));
    process.exit(0);
  })();
});
