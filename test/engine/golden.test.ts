/**
 * Golden test: the engine's replies, events and state hashes over 1,500 seeded streams (four flavours,
 * golden-streams.ts), each snapshotted and restored once midway, compared with the digests recorded in
 * golden-digests.json. Any change in what the engine does changes a digest. When a change of behaviour is
 * intended, re-record with `npm run golden:record` and explain each changed digest in the commit body.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DEFAULT_PER_FLAVOUR, DIGESTS_FILE, runGolden } from './golden-run.js';

test('the engine does what it did when the digests were recorded (replies, events, state hashes)', () => {
  const recorded = JSON.parse(readFileSync(DIGESTS_FILE, 'utf8')) as { perFlavour: number; digests: Record<string, string> };
  assert.equal(recorded.perFlavour, DEFAULT_PER_FLAVOUR, 'golden-digests.json was recorded with another stream count: run npm run golden:record');
  const { digests, reached } = runGolden(DEFAULT_PER_FLAVOUR);
  const changed = Object.keys(recorded.digests).filter((name) => digests[name] !== recorded.digests[name]);
  assert.deepEqual(changed, [], `${changed.length} of ${Object.keys(recorded.digests).length} streams changed, first: ${changed.slice(0, 10).join(', ')}`);
  assert.equal(Object.keys(digests).length, Object.keys(recorded.digests).length);
  // The streams must keep reaching every path they were chosen for, or the digests prove little.
  for (const [path, min] of Object.entries({
    trades: 20_000, refusals: 10_000, liquidationFills: 50, adlFills: 100, reserveCovered: 1, marginCalls: 5, stopsTriggered: 2_000,
    tpslDone: 800, fundingPayments: 1_000, dayExpired: 500, withdrawals: 500,
  })) {
    assert.ok(reached[path as keyof typeof reached] >= min, `the golden streams reached ${path} only ${reached[path as keyof typeof reached]} times (< ${min})`);
  }
});
