/**
 * A gateway's command path, timed (issue 29): the leader's answer (NATS request, engine apply, JetStream
 * append, NATS reply) and then this gateway's follower catching up to the command's seq. Two histograms
 * the gateway's /metrics exposes; an observation costs a clock read and a bucket search.
 */
import { performance } from 'node:perf_hooks';
import type { Submit } from '../engine/commands.js';
import { LatencyHistogram } from '../sequencer/stats.js';
import type { CommandSubmitter, EngineFollower } from './ports.js';

export interface CommandPathTiming {
  /** Request to the engine leader until its answer (the command is durable then). */
  leaderRoundTrip: LatencyHistogram;
  /** Leader's answer until this gateway's follower applied the command (read-your-writes). */
  followerWait: LatencyHistogram;
}

export function newCommandPathTiming(): CommandPathTiming {
  return { leaderRoundTrip: new LatencyHistogram(), followerWait: new LatencyHistogram() };
}

/** Submits through the leader, then waits for `follower` to reach the command's seq, timing both. */
export function timedClusterSubmit(
  leader: CommandSubmitter,
  follower: Pick<EngineFollower, 'waitFor'>,
  timing: CommandPathTiming,
  followerWaitMs: number,
): Submit {
  return async (cmd) => {
    const t0 = performance.now();
    const receipt = await leader.submit(cmd);
    const t1 = performance.now();
    timing.leaderRoundTrip.observe((t1 - t0) / 1000);
    await follower.waitFor(receipt.seq, followerWaitMs);
    timing.followerWait.observe((performance.now() - t1) / 1000);
    // The events reach this gateway through its follower; the routes read the reply.
    return { ...receipt.result, events: [] };
  };
}
