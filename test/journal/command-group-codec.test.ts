// A group message (src/journal/command-group-codec.ts) gives back every command as a JSON round trip of
// what was appended, at its seq, however the batch is cut to fit the message size; damage is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Command } from '../../src/engine/commands.js';
import { AppendBuffer } from '../../src/journal/append-buffer.js';
import { decodeGroup, encodeGroups } from '../../src/journal/command-group-codec.js';
import { materialize, opsArb } from '../engine/random-ops.js';

const viaJson = (c: Command): unknown => JSON.parse(JSON.stringify(c));

function batchOf(commands: Command[], firstSeq: number, requestIds: Array<string | undefined> = []) {
  const buffer = new AppendBuffer(firstSeq - 1, 0);
  commands.forEach((c, i) => buffer.append(firstSeq + i, c, requestIds[i]));
  return buffer.take();
}

test('group codec: real engine commands round-trip at their seqs, cut into groups of at most maxBytes', () => {
  fc.assert(
    fc.property(opsArb(1, 120), fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 64, max: 4096 }), (ops, firstSeq, maxBytes) => {
      const commands = materialize(ops);
      const groups = encodeGroups(batchOf(commands, firstSeq), maxBytes);
      let next = firstSeq;
      const decoded: unknown[] = [];
      for (const g of groups) {
        // Only a single command bigger than the limit may exceed it, alone in its group.
        assert.ok(g.payload.length <= maxBytes || g.firstSeq === g.lastSeq, `group ${g.firstSeq}..${g.lastSeq}: ${g.payload.length} > ${maxBytes}`);
        const { firstSeq: first, lastTs, entries } = decodeGroup(g.payload);
        assert.equal(first, next);
        assert.equal(g.firstSeq, next);
        assert.equal(g.lastSeq, next + entries.length - 1);
        assert.equal(lastTs, commands[g.lastSeq - firstSeq].ts);
        entries.forEach((e, i) => assert.equal(e.seq, next + i));
        decoded.push(...entries.map((e) => e.command));
        next += entries.length;
      }
      assert.deepEqual(decoded, commands.map(viaJson));
    }),
    { numRuns: 60 },
  );
});

test('group codec: JSON text with any code unit survives; truncation, trailing bytes and flips are refused', () => {
  const odd = ['plain', 'ид-😀', '\ud800 lone', ''].map((transferId, i): Command => ({ kind: 'funds.deposit', ts: 10 + i, userId: 1, amount: '1', transferId }));
  const [group] = encodeGroups(batchOf(odd, 7), 1 << 20);
  assert.deepEqual(decodeGroup(group.payload).entries.map((e) => e.command), odd.map(viaJson));
  assert.throws(() => decodeGroup(group.payload.subarray(0, group.payload.length - 1)), /journal group: truncated/);
  assert.throws(() => decodeGroup(Buffer.concat([group.payload, Buffer.from([0])])), /trailing bytes/);
  assert.throws(() => decodeGroup(Uint8Array.from([3, ...group.payload.subarray(1)])), /unknown format 3/);
  // A flipped ts no longer matches the command's own: refused rather than replayed at another time.
  const flipped = Uint8Array.from(group.payload);
  flipped[3 + 7] ^= 0x40;
  assert.throws(() => decodeGroup(flipped), /journal group:/);
});

test('group codec: gateway request ids travel with their commands (format 2), only where given', () => {
  fc.assert(
    fc.property(opsArb(1, 80), fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 64, max: 4096 }), fc.infiniteStream(fc.option(fc.stringMatching(/^[!-~]{1,40}$/), { nil: undefined })), (ops, firstSeq, maxBytes, ids) => {
      const commands = materialize(ops);
      const requestIds = commands.map(() => ids.next().value as string | undefined);
      const groups = encodeGroups(batchOf(commands, firstSeq, requestIds), maxBytes);
      const decoded = groups.flatMap((g) => {
        assert.ok(g.payload.length <= maxBytes || g.firstSeq === g.lastSeq, `group ${g.firstSeq}..${g.lastSeq}: ${g.payload.length} > ${maxBytes}`);
        const inGroup = requestIds.slice(g.firstSeq - firstSeq, g.lastSeq - firstSeq + 1);
        assert.equal(g.payload[0], inGroup.some((id) => id !== undefined) ? 2 : 1, 'format 2 only for a group with ids');
        return decodeGroup(g.payload).entries;
      });
      assert.deepEqual(decoded.map((e) => e.requestId), requestIds);
      assert.deepEqual(decoded.map((e) => e.command), commands.map(viaJson));
    }),
    { numRuns: 60 },
  );
});

test('group codec: request id trailers out of order or out of range are refused', () => {
  const commands = [1, 2, 3].map((i): Command => ({ kind: 'funds.deposit', ts: i, userId: 1, amount: '1', transferId: `t${i}` }));
  const [group] = encodeGroups(batchOf(commands, 1, ['a', undefined, 'c']), 1 << 20);
  assert.deepEqual(decodeGroup(group.payload).entries.map((e) => e.requestId), ['a', undefined, 'c']);
  const p = group.payload;
  // Trailer: count 2, index 0, ascii tag, len 1, 'a', index 2, ascii tag, len 1, 'c'.
  const trailer = p.length - 9;
  assert.deepEqual([...p.subarray(trailer)], [2, 0, p[trailer + 2], 1, 97, 2, p[trailer + 2], 1, 99]);
  const swapped = Uint8Array.from(p);
  swapped[trailer + 1] = 2;
  swapped[trailer + 5] = 0;
  assert.throws(() => decodeGroup(swapped), /request id index 0 out of order/);
  const outside = Uint8Array.from(p);
  outside[trailer + 5] = 3;
  assert.throws(() => decodeGroup(outside), /request id index 3 out of order or range/);
  assert.throws(() => encodeGroups(batchOf(commands.slice(0, 1), 1, ['has space']), 1 << 20), /printable ASCII/);
});
