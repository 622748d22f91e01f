// The store's chart periods (periodStart, nextPeriod, bucketStarts) against the fixed calendar of
// test/store/calendar.ts, at random times and at the edges: leap days, month and year ends, Sundays and Mondays.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { bucketStarts, CHART_GROUPS, nextPeriod, periodStart } from '../../src/store/index.js';
import { periodAfter, periodsCovering } from './calendar.js';

const FROM = Date.parse('2024-01-01T00:00:00.000Z');
const UNTIL = Date.parse('2027-12-01T00:00:00.000Z');
const EDGES = ['2024-02-29T23:59:59.999Z', '2024-03-01T00:00:00.000Z', '2024-12-31T23:59:59.999Z', '2025-01-01T00:00:00.000Z',
  '2025-03-02T23:59:59.999Z', '2025-03-03T00:00:00.000Z', '2026-06-30T12:00:00.000Z'].map(Date.parse);

test('the period containing a time, and the next one, are the calendar\'s', () => {
  fc.assert(
    fc.property(fc.oneof(fc.integer({ min: FROM, max: UNTIL }), fc.constantFrom(...EDGES)), fc.constantFrom(...CHART_GROUPS), (t, group) => {
      const [start] = periodsCovering(group, t, t + 1);
      assert.equal(periodStart(t, group), start, `${group} of ${new Date(t).toISOString()}`);
      assert.equal(nextPeriod(start, group), periodAfter(group, start));
    }),
    { numRuns: 2000 },
  );
});

test('bucket starts of a window are the calendar\'s periods covering it', () => {
  fc.assert(
    fc.property(fc.integer({ min: FROM, max: UNTIL - 400 * 86_400_000 }), fc.integer({ min: 1, max: 400 * 86_400_000 }), fc.constantFrom('day', 'week', 'month', 'year' as const), (after, span, group) => {
      assert.deepEqual(bucketStarts({ after, before: after + span, group }), periodsCovering(group, after, after + span));
    }),
    { numRuns: 300 },
  );
});
