import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ProjectorFeed, ReadModelBehindError } from '../../src/app/projector-feed.js';
import type { EventBatch } from '../../src/engine/commands.js';
import type { ProjectResult } from '../../src/store/index.js';

const batch = (seq: number): EventBatch => ({ seq, ts: seq, kind: 'funds.deposit', events: [] });
const silent = pino({ level: 'silent' });

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
          resolve({ applied: bs.length, skipped: 0, rows: 0, lastSeq: bs.at(-1)!.seq });
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
  while (gates.length === 0) await new Promise((r) => setTimeout(r, 1)); // the retry of 13
  gates.shift()!();
  while (feed.status().state !== 'current') await new Promise((r) => setTimeout(r, 1));
  await feed.whenCaughtUp(13);
  assert.deepEqual(projected, [11, 12, 13], 'the failed batch was projected on retry');
  assert.deepEqual(feed.status(), { projectedSeq: 13, state: 'current' });
  await feed.drain();
});

test('ProjectorFeed: a read refuses after the timeout instead of answering from a read model that is behind', async () => {
  const feed = new ProjectorFeed({ project: async () => ({ applied: 0, skipped: 0, rows: 0, lastSeq: 0 }) }, silent, 0, { catchUpTimeoutMs: 20 });
  const keepAlive = setTimeout(() => undefined, 5000); // the feed's timer is unref'd on purpose
  const t0 = Date.now();
  await assert.rejects(feed.whenCaughtUp(5), ReadModelBehindError); // never pushed
  clearTimeout(keepAlive);
  assert.ok(Date.now() - t0 >= 15);
});

test('ProjectorFeed: with a linger, batches arriving under load share one call; a waiting read or drain() ends the linger', async () => {
  const calls: number[][] = [];
  const projector = {
    project: async (bs: readonly EventBatch[]): Promise<ProjectResult> => {
      calls.push(bs.map((b) => b.seq));
      return { applied: bs.length, skipped: 0, rows: 0, lastSeq: bs.at(-1)!.seq };
    },
  };
  const feed = new ProjectorFeed(projector, silent, 0, { catchUpTimeoutMs: 60_000, lingerMs: 10_000 });
  feed.push(batch(1)); // idle: projected at once
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(calls, [[1]]);
  feed.push(batch(2));
  feed.push(batch(3));
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(calls, [[1]], 'lingering: 2 and 3 wait for the next call');
  const t0 = Date.now();
  await feed.whenCaughtUp(3); // a read needs them: the linger ends now, not after 10 s
  assert.ok(Date.now() - t0 < 5000);
  assert.deepEqual(calls, [[1], [2, 3]]);
  feed.push(batch(4));
  feed.push(batch(5));
  await feed.drain(); // a graceful stop does not linger either
  assert.deepEqual(calls, [[1], [2, 3], [4, 5]]);
});

test('ProjectorFeed: the linger counts from the previous call, so a quiet feed projects each batch at once', async () => {
  const calls: number[][] = [];
  const projector = {
    project: async (bs: readonly EventBatch[]): Promise<ProjectResult> => {
      calls.push(bs.map((b) => b.seq));
      return { applied: bs.length, skipped: 0, rows: 0, lastSeq: bs.at(-1)!.seq };
    },
  };
  const feed = new ProjectorFeed(projector, silent, 0, { catchUpTimeoutMs: 60_000, lingerMs: 20 });
  feed.push(batch(1));
  await new Promise((r) => setTimeout(r, 40));
  feed.push(batch(2));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(calls, [[1], [2]]);
  feed.push(batch(3)); // 2 started just now: 3 waits out the rest of the 20 ms
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(calls, [[1], [2]]);
  await new Promise((r) => setTimeout(r, 60));
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
      return { applied: bs.length, skipped: 0, rows: 0, lastSeq: bs.at(-1)!.seq };
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
