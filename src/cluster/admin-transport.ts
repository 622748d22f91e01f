/**
 * The operator's engine calls in a cluster: a gateway's POST /api/admin/snapshot and /checkpoint reach the
 * engine leader over NATS requests, since only the leader's sequencer can snapshot or give a durable checkpoint.
 * `stats` reads the leader's sequencer statistics (apply, JetStream append and ack latency), which no HTTP
 * server of the leader exposes (bench:cluster's per-hop breakdown).
 * Like commands (issue 30), a leader answers only on its lease epoch's subjects, and a gateway calls the epoch
 * its LeaderDirectory names: a deposed (SIGSTOPped) leader never takes an admin call.
 */
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type pino from 'pino';
import { clusterNames } from '../journal/jetstream-names.js';
import type { SequencerStats } from '../sequencer/stats.js';
import { LeaderRefusedError, LeaderUnavailableError } from './errors.js';

export interface EngineAdmin {
  snapshotNow(): Promise<number>;
  checkpoint(): Promise<{ seq: number; stateHash: string }>;
}

/** The leader's sequencer statistics as JSON carries them (histograms: bounds, counts, sum, count, max). */
export type LeaderStats = { seq: number } & Pick<SequencerStats,
  'commandsByKind' | 'refusedByKind' | 'flushes' | 'flushedCommands' | 'snapshotsTaken' | 'snapshotsSaved' | 'snapshotFailures' | 'lastSnapshotSeq'> &
  Record<LeaderHistogram, { bounds: number[]; counts: number[]; sum: number; count: number; max: number }>;

/** The sequencer's histograms, all sent to the gateways (their /metrics shows the leader's). */
export const LEADER_HISTOGRAMS = ['applyLatency', 'flushLatency', 'ackLatency', 'snapshotCaptureLatency', 'snapshotReplicaLatency'] as const;
type LeaderHistogram = typeof LEADER_HISTOGRAMS[number];

type AdminAnswer = { ok: true; value: unknown } | { ok: false; message: string };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Leader side: answers the admin calls with its sequencer's. */
export function serveAdmin(options: {
  nc: NatsConnection;
  cluster: string;
  admin: EngineAdmin;
  /** The sequencer's statistics and the engine's seq, read when asked. */
  stats: () => { seq: number; stats: SequencerStats };
  logger: pino.Logger;
  /** The lease epoch it leads under: it answers on that epoch's subjects only (no shared queue group). */
  epoch: number;
}): { close(): void } {
  const names = clusterNames(options.cluster);
  const on = (call: 'snapshot' | 'checkpoint' | 'stats', run: () => Promise<unknown>): Subscription => options.nc.subscribe(
    names.adminSubject(call, options.epoch),
    { callback: (e, msg) => e ? options.logger.error({ err: e }, 'admin subscription failed') : answer(msg, run) },
  );
  const answer = (msg: Msg, run: () => Promise<unknown>): void => {
    run().then(
      (value) => msg.respond(encoder.encode(JSON.stringify({ ok: true, value } satisfies AdminAnswer))),
      (err: unknown) => {
        options.logger.warn({ err, subject: msg.subject }, 'admin call failed');
        msg.respond(encoder.encode(JSON.stringify({ ok: false, message: err instanceof Error ? err.message : String(err) } satisfies AdminAnswer)));
      },
    );
  };
  const subs: Subscription[] = [
    on('snapshot', () => options.admin.snapshotNow()),
    on('checkpoint', () => options.admin.checkpoint()),
    on('stats', async () => leaderStats(options.stats())),
  ];
  return { close: () => subs.forEach((s) => s.unsubscribe()) };
}

function leaderStats({ seq, stats }: { seq: number; stats: SequencerStats }): LeaderStats {
  const h = (x: SequencerStats['applyLatency']) => ({ bounds: [...x.bounds], counts: [...x.counts], sum: x.sum, count: x.count, max: x.max });
  return {
    seq, commandsByKind: { ...stats.commandsByKind }, refusedByKind: { ...stats.refusedByKind },
    flushes: stats.flushes, flushedCommands: stats.flushedCommands, snapshotsTaken: stats.snapshotsTaken,
    snapshotsSaved: stats.snapshotsSaved, snapshotFailures: stats.snapshotFailures, lastSnapshotSeq: stats.lastSnapshotSeq,
    applyLatency: h(stats.applyLatency), flushLatency: h(stats.flushLatency), ackLatency: h(stats.ackLatency),
    snapshotCaptureLatency: h(stats.snapshotCaptureLatency), snapshotReplicaLatency: h(stats.snapshotReplicaLatency),
  };
}

/**
 * Gateway side: each call goes to the subject of the epoch `leader` (a LeaderDirectory) names at that moment.
 * Snapshots of a large engine take a while: the wait is generous.
 */
export function natsEngineAdmin(
  nc: NatsConnection, cluster: string, leader: { readonly epoch: number | undefined }, timeoutMs = 60_000,
): EngineAdmin & { stats(): Promise<LeaderStats> } {
  const names = clusterNames(cluster);
  const call = async (which: 'snapshot' | 'checkpoint' | 'stats'): Promise<unknown> => {
    const epoch = leader.epoch;
    if (epoch === undefined) throw new LeaderUnavailableError('no engine leads the cluster: its lease is free', 'not-applied');
    const subject = names.adminSubject(which, epoch);
    let reply: Msg;
    try {
      reply = await nc.request(subject, new Uint8Array(0), { timeout: timeoutMs });
    } catch (err) {
      throw new LeaderUnavailableError(`the engine leader did not answer on ${subject}: ${err instanceof Error ? err.message : String(err)}`, 'unknown', { cause: err });
    }
    const answer = JSON.parse(decoder.decode(reply.data)) as AdminAnswer;
    if (!answer.ok) throw new LeaderRefusedError(answer.message, 'ADMIN_CALL_FAILED');
    return answer.value;
  };
  return {
    snapshotNow: async () => (await call('snapshot')) as number,
    checkpoint: async () => (await call('checkpoint')) as { seq: number; stateHash: string },
    stats: async () => (await call('stats')) as LeaderStats,
  };
}
