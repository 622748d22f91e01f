// The projector feed; linger and timeouts run on node:test's mock clock (setTimeout, and Date as the feed's clock).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ProjectorFeed, ReadModelBehindError } from '../../src/app/projector-feed.js';
import type { EventBatch } from '../../src/engine/commands.js';
import type { ProjectResult } from '../../src/store/index.js';
import { waitFor } from '../realtime/helpers.js';

/** Lets the feed's promises run (setImmediate is not mocked). */
const turn = () => new Promise<void>((r) => setImmediate(r));

/** Mock setTimeout and Date; `advance(ms)` moves the clock 1 ms at a time, letting the feed react between. */
function mockClock(t: TestContext): (ms: number) => Promise<void> {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  return async (ms) => {
    for (let i = 0; i < ms; i++) {
      t.mock.timers.tick(1);
      await turn();
    }
  };
}

const batch = (seq: number): EventBatch => ({ seq, ts: seq, kind: 'funds.deposit', events: [] });
const silent = pino({ level: 'silent' });
/** What a projector that applied every batch answers. */
const allApplied = (bs: readonly EventBatch[]): ProjectResult => ({ applied: bs.length, skipped: 0, rows: 0, lastSeq: bs.at(-1)!.seq });

/** A projector that applies every batch, recording the seqs of each call in `calls`. */
function recordingProjector(calls: number[][]) {
  return {
    project: async (bs: readonly EventBatch[]): Promise<ProjectResult> => {
      calls.push(bs.map((b) => b.seq));
      return allApplied(bs);
    },
  };
}

test('ProjectorFeed: reads wait for the projection of what was applied; a failure refuses them and is retried', async () => {
  const gates: Array<() => void> = [];
  let fail = false;
  const projected: number[] = [];
  const projector = {
    project: (bs: readonly EventBatch[]): Promise<ProjectResult> =>
      new Promise((resolve, reject) => {
        gates.push(() => {
          if (fail) return reject(new Error('disk full'));
          projected.push(...bs.map((b) => b.seq));
          resolve(allApplied(bs));
        });
      }),
  };
  const feed = new ProjectorFeed(projector, silent, 10, { catchUpTimeoutMs: 60_000, retryMinMs: 1, retryMaxMs: 1 });
  await feed.whenCaughtUp(10); // nothing newer than the start: no wait

  let caughtUp = false;
  const wait = feed.whenCaughtUp(12).then(() => (caughtUp = true));
  feed.push(batch(11));
  feed.push(batch(12)); // queued behind the call for 11
  await new Promise((r) => setImmediate(r));
  gates.shift()!(); // 11 done
  await new Promise((r) => setImmediate(r));
  assert.equal(caughtUp, false, 'still waiting for 12');
  gates.shift()!(); // 12 done
  await wait;
  assert.deepEqual(projected, [11, 12]);

  fail = true;
  const afterFailure = feed.whenCaughtUp(13);
  feed.push(batch(13));
  await new Promise((r) => setImmediate(r));
  gates.shift()!(); // projection of 13 fails: the waiting read is refused, not served stale
  await assert.rejects(afterFailure, (e: Error) => e instanceof ReadModelBehindError && /disk full/.test(e.message));
  await assert.rejects(feed.whenCaughtUp(13), ReadModelBehindError, 'a new read while failing is refused at once');
  assert.equal(feed.status().state, 'retrying');
  fail = false;
  await waitFor(() => gates.length > 0, 10_000, 'the retry of 13');
  gates.shift()!();
  await waitFor(() => feed.status().state === 'current', 10_000, 'projection current again');
  await feed.whenCaughtUp(13);
  assert.deepEqual(projected, [11, 12, 13], 'the failed batch was projected on retry');
  assert.deepEqual(feed.status(), { projectedSeq: 13, state: 'current' });
  await feed.drain();
});

test('ProjectorFeed: a read refuses after the timeout instead of answering from a read model that is behind', async (t) => {
  const advance = mockClock(t);
  const feed = new ProjectorFeed({ project: async () => ({ applied: 0, skipped: 0, rows: 0, lastSeq: 0 }) }, silent, 0, { catchUpTimeoutMs: 20 });
  const outcome: { settled?: unknown } = {};
  feed.whenCaughtUp(5).then(() => (outcome.settled = 'answered'), (err: unknown) => (outcome.settled = err)); // never pushed
  await advance(19);
  assert.deepEqual(Object.keys(outcome), [], 'still waiting before the timeout');
  await advance(1);
  assert.ok(outcome.settled instanceof ReadModelBehindError, 'refused at the timeout');
});

test('ProjectorFeed: with a linger, batches arriving under load share one call; a waiting read or drain() ends the linger', async (t) => {
  const advance = mockClock(t);
  const calls: number[][] = [];
  const projector = recordingProjector(calls);
  const feed = new ProjectorFeed(projector, silent, 0, { catchUpTimeoutMs: 60_000, lingerMs: 10_000, now: () => Date.now() });
  feed.push(batch(1)); // idle: projected at once
  await turn();
  assert.deepEqual(calls, [[1]]);
  feed.push(batch(2));
  feed.push(batch(3));
  await advance(100);
  assert.deepEqual(calls, [[1]], 'lingering: 2 and 3 wait for the next call');
  await feed.whenCaughtUp(3); // a read needs them: the linger ends now, not after 10 s (the clock stands still)
  assert.deepEqual(calls, [[1], [2, 3]]);
  feed.push(batch(4));
  feed.push(batch(5));
  await feed.drain(); // a graceful stop does not linger either
  assert.deepEqual(calls, [[1], [2, 3], [4, 5]]);
});

test('ProjectorFeed: the linger counts from the previous call, so a quiet feed projects each batch at once', async (t) => {
  const advance = mockClock(t);
  const calls: number[][] = [];
  const projector = recordingProjector(calls);
  const feed = new ProjectorFeed(projector, silent, 0, { catchUpTimeoutMs: 60_000, lingerMs: 20, now: () => Date.now() });
  feed.push(batch(1));
  await advance(40);
  feed.push(batch(2)); // 40 ms after the last call: at once
  await turn();
  assert.deepEqual(calls, [[1], [2]]);
  feed.push(batch(3)); // 2 started just now: 3 waits out the 20 ms
  await advance(19);
  assert.deepEqual(calls, [[1], [2]]);
  await advance(1);
  assert.deepEqual(calls, [[1], [2], [3]]);
  await feed.drain();
});

test('ProjectorFeed: a stop does not wait for failing storage; the batches stay queued and are projected when it works again', async () => {
  let fail = true;
  const projected: number[] = [];
  const projector = {
    project: async (bs: readonly EventBatch[]): Promise<ProjectResult> => {
      if (fail) throw new Error('disk full');
      projected.push(...bs.map((b) => b.seq));
      return allApplied(bs);
    },
  };
  const feed = new ProjectorFeed(projector, silent, 0, { retryMinMs: 60_000, retryMaxMs: 60_000 });
  feed.push(batch(1));
  feed.push(batch(2));
  await feed.drain(); // one attempt, then gives up waiting (the retry delay is a minute)
  assert.equal(feed.status().state, 'retrying');
  fail = false;
  feed.push(batch(3)); // restarts the loop; the drain below skips the delay
  await feed.drain();
  assert.deepEqual(projected, [1, 2, 3], 'nothing lost, in order');
  const handed = feed.handOver();
  assert.deepEqual(handed, { projectedSeq: 3, pending: [] });
});

test('ProjectorFeed: past maxBuffered queued batches it stops (bounded memory) and refuses reads until a restart', async () => {
  const projector = { project: async (): Promise<ProjectResult> => { throw new Error('disk full'); } };
  const feed = new ProjectorFeed(projector, silent, 0, { retryMinMs: 1, retryMaxMs: 1, maxBuffered: 5 });
  for (let s = 1; s <= 7; s++) feed.push(batch(s)); // 1 is in flight, 2…7 queued
  assert.equal(feed.status().state, 'stopped');
  await assert.rejects(feed.whenCaughtUp(1), (e: Error) => e instanceof ReadModelBehindError && /restart/.test(e.message));
  await feed.drain();
});
