import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3';
import { keccak256, keccakBackend } from '../../src/signing/keccak.js';

test('keccak256 uses the native addon and equals @noble/hashes for every length around the block size', () => {
  assert.equal(keccakBackend, 'native', 'the keccak addon did not load: hashing falls back to JS');
  const hex = (u: Uint8Array) => Buffer.from(u).toString('hex');
  // Known vector: keccak256("") (not SHA3-256("")).
  assert.equal(hex(keccak256(new Uint8Array(0))), 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
  for (let len = 0; len <= 300; len++) {
    const data = randomBytes(len);
    assert.equal(hex(keccak256(data)), hex(keccak_256(data)), `length ${len}`);
    // A plain Uint8Array view into a larger buffer hashes only its own bytes.
    const big = new Uint8Array(len + 10);
    big.set(data, 5);
    assert.equal(hex(keccak256(big.subarray(5, 5 + len))), hex(keccak_256(data)), `view, length ${len}`);
  }
});
