/**
 * A gateway's copy of the engine leader's sequencer statistics: commands by kind, apply, append and ack
 * latency exist only on the leader, so the gateway's /metrics and admin status read this copy, refreshed from
 * the leader (over NATS, `natsEngineAdmin(...).stats`) at each scrape.
 */
import type pino from 'pino';
import { LatencyHistogram, newSequencerStats, type SequencerStats } from '../sequencer/stats.js';
import { LEADER_HISTOGRAMS, type LeaderStats } from './admin-transport.js';

export class LeaderStatsMirror {
  /** The leader's statistics as of the last refresh (empty until the first). */
  readonly stats: SequencerStats = newSequencerStats();

  constructor(private readonly fetchStats: () => Promise<LeaderStats>, private readonly log: pino.Logger) {}

  /** Copies the leader's current statistics; a leader that does not answer leaves the last copy (logged). */
  async refresh(): Promise<void> {
    let leader: LeaderStats;
    try {
      leader = await this.fetchStats();
    } catch (err) {
      this.log.warn({ err }, 'leader statistics unavailable: /metrics shows the last copy');
      return;
    }
    const s = this.stats;
    s.commandsByKind = { ...leader.commandsByKind };
    s.refusedByKind = { ...leader.refusedByKind };
    s.flushes = leader.flushes;
    s.flushedCommands = leader.flushedCommands;
    s.snapshotsTaken = leader.snapshotsTaken;
    s.snapshotsSaved = leader.snapshotsSaved;
    s.snapshotFailures = leader.snapshotFailures;
    s.lastSnapshotSeq = leader.lastSnapshotSeq;
    for (const name of LEADER_HISTOGRAMS) s[name] = histogramOf(leader[name]);
  }
}

function histogramOf(h: LeaderStats['applyLatency']): LatencyHistogram {
  const out = new LatencyHistogram(h.bounds);
  out.counts.splice(0, out.counts.length, ...h.counts);
  out.sum = h.sum;
  out.count = h.count;
  out.max = h.max;
  return out;
}
