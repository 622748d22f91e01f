/**
 * A cluster gateway's wait for the projector (ProjectedSeqWatch): a read waits while the read model is behind,
 * but is refused at once while PostgreSQL cannot be reached, instead of holding the client until its deadline.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProjectedSeqWatch } from '../../src/app/roles/projected-seq-watch.js';
import { ReadModelBehindError } from '../../src/app/projector-feed.js';

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

test('an unreachable read model refuses a waiting read on the first poll', async () => {
  let polls = 0;
  const watch = new ProjectedSeqWatch({ lastSeq: async () => { polls++; throw refused; }, pollMs: 5, timeoutMs: 60_000 });
  try {
    await assert.rejects(watch.whenCaughtUp(7), (err: Error) => err instanceof ReadModelBehindError && /ECONNREFUSED/.test(err.message));
    assert.equal(polls, 1);
  } finally {
    watch.close();
  }
});

test('a read model that is only behind keeps the read waiting until it catches up', async () => {
  let seq = 0;
  const watch = new ProjectedSeqWatch({ lastSeq: async () => (seq += 1), pollMs: 5, timeoutMs: 60_000 });
  try {
    await watch.whenCaughtUp(5);
    assert.ok(seq >= 5);
  } finally {
    watch.close();
  }
});
