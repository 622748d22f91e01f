/**
 * A read-only engine following the cluster's command log (gateways and the projector): its own NATS
 * connection, the snapshot object store to start from, and the follower itself (src/cluster/follower.ts).
 */
import type pino from 'pino';
import { openEngineFollower, type EngineFollowerOptions, type JetStreamEngineFollower } from '../../cluster/follower.js';
import { createEngine, restoreEngine } from '../../engine/engine.js';
import { connectNats } from '../../journal/nats-connection.js';
import { openObjectStoreSnapshots } from '../../journal/object-store-snapshots.js';
import type { NatsConnection } from '@nats-io/transport-node';
import type { NatsConfig } from '../config.js';
import { closingOnFailure, type Built } from '../shutdown-registry.js';
import type { RequestLedger } from '../../cluster/request-ledger.js';
import { StandbySnapshotWriter } from '../../cluster/standby-snapshots.js';

export interface Following {
  follower: JetStreamEngineFollower;
  /** The connection the follower reads on; the role's other NATS clients (command requests) share it. */
  nc: NatsConnection;
  /** An engine standby's snapshot writer (SNAPSHOT_WRITER=standby). */
  snapshotWriter?: StandbySnapshotWriter;
}

/** A standby writes the cluster's periodic snapshots (labelled `writer` in the bucket). */
export interface WriteSnapshots {
  everyCommands: number;
  everyMs: number;
  writer: string;
}

export async function buildFollower(
  config: { nats: Pick<NatsConfig, 'url' | 'cluster' | 'streamReplicas' | 'auth'> },
  name: string,
  options: Pick<EngineFollowerOptions, 'bus' | 'pace' | 'snapshotAtOrBefore' | 'onFailed'> & {
    log: pino.Logger;
    writeSnapshots?: WriteSnapshots;
    /** An engine standby's: the outcome of each command that carries a gateway request id (issue 30). */
    requests?: Pick<RequestLedger, 'recordApplied'>;
  },
): Promise<Built<Following>> {
  const nc = await connectNats(config.nats.url, name, config.nats.auth).catch((err: unknown) => {
    throw new Error(`NATS at ${config.nats.url} does not answer (${err instanceof Error ? err.message : String(err)})`, { cause: err });
  });
  const connection = { close: () => nc.close() };
  const snapshots = await closingOnFailure(connection, () => openObjectStoreSnapshots({
    nc, cluster: config.nats.cluster, replicas: config.nats.streamReplicas, writer: options.writeSnapshots?.writer,
  }));
  const w = options.writeSnapshots;
  const snapshotWriter = w && new StandbySnapshotWriter({
    store: snapshots, everyCommands: w.everyCommands, everyMs: w.everyMs, logger: options.log.child({ module: 'standby-snapshots' }),
  });
  const follower = await closingOnFailure(connection, () => openEngineFollower({
    nc, cluster: config.nats.cluster, snapshots, createEngine, restoreEngine,
    bus: options.bus, pace: options.pace, snapshotAtOrBefore: options.snapshotAtOrBefore, onFailed: options.onFailed,
    logger: options.log.child({ module: 'follower' }),
    onApplied: (engine, entry, result) => {
      options.requests?.recordApplied(entry, result);
      snapshotWriter?.onApplied(engine, entry);
    },
  }));
  return {
    service: { follower, nc, snapshotWriter },
    stop: async () => {
      try {
        await follower.close();
        await snapshotWriter?.close();
        await snapshots.close();
      } finally {
        await nc.drain().catch(() => nc.close());
      }
    },
  };
}
