import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ProjectorFeed } from '../../src/app/projector-feed.js';
import type { EventBatch } from '../../src/sequencer/event-bus.js';
import type { ProjectResult } from '../../src/store/index.js';

const batch = (seq: number): EventBatch => ({ seq, ts: seq, kind: 'funds.deposit', events: [] });
const silent = pino({ level: 'silent' });

test('ProjectorFeed: reads wait for the projection of what was applied, failures do not block them', async () => {
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
  const feed = new ProjectorFeed(projector, silent, 10, 60_000);
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
  gates.shift()!(); // projection of 13 fails: logged, and the read goes ahead
  await afterFailure;
  await feed.drain();
});

test('ProjectorFeed: a read gives up waiting after the timeout', async () => {
  const feed = new ProjectorFeed({ project: async () => ({ applied: 0, skipped: 0, rows: 0, lastSeq: 0 }) }, silent, 0, 20);
  const keepAlive = setTimeout(() => undefined, 5000); // the feed's timer is unref'd on purpose
  const t0 = Date.now();
  await feed.whenCaughtUp(5); // never pushed
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
  const feed = new ProjectorFeed(projector, silent, 0, 60_000, 10_000);
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
  const feed = new ProjectorFeed(projector, silent, 0, 60_000, 20);
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
