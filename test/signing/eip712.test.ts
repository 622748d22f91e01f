import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { TypedDataEncoder, getAddress, hexlify } from 'ethers';
import {
  typedDataDigest,
  normalizeAmount,
  eip712Domain,
  types,
  SIGNED_TYPES,
  Eip712EncodingError,
} from '../../src/signing/eip712.js';
import type { SignedMessage, SignedType } from '../../src/signing/ports.js';

const ALL = Object.keys(SIGNED_TYPES) as SignedType[];

const addressArb = fc
  .tuple(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.boolean())
  .map(([b, checksum]) => (checksum ? getAddress(hexlify(b)) : hexlify(b)));

function messageArb(type: SignedType): fc.Arbitrary<SignedMessage> {
  const fields: Record<string, fc.Arbitrary<string | bigint>> = {};
  for (const f of SIGNED_TYPES[type]) {
    if (f.type === 'string') fields[f.name] = fc.string({ unit: 'grapheme', maxLength: 40 });
    else if (f.type === 'address') fields[f.name] = addressArb;
    else {
      const bits = BigInt(f.type.slice(4));
      fields[f.name] = fc.oneof(fc.bigInt(0n, (1n << bits) - 1n), fc.constant((1n << bits) - 1n), fc.constant(0n));
    }
  }
  return fc.record(fields) as fc.Arbitrary<SignedMessage>;
}

const chainIdArb = fc.oneof(fc.constant('16182'), fc.bigInt(0n, (1n << 64n) - 1n).map(String));

for (const type of ALL) {
  test(`digest equals ethers TypedDataEncoder.hash: ${type}`, () => {
    fc.assert(
      fc.property(chainIdArb, messageArb(type), (chainId, message) => {
        const ours = hexlify(typedDataDigest(type, chainId, message));
        const theirs = TypedDataEncoder.hash(eip712Domain(chainId), types[type], message);
        assert.equal(ours, theirs);
      }),
      { numRuns: 150 },
    );
  });
}

test('the type string carries the spaces of the primary type name', () => {
  assert.equal(
    TypedDataEncoder.from(types['New limit order']).encodeType('New limit order'),
    'New limit order(string id,string instrument,string side,uint8 leverage,uint96 quantity,uint80 limitPrice,uint256 chainId)',
  );
});

test('out-of-range and malformed values throw Eip712EncodingError', () => {
  const base: SignedMessage = {
    id: 'x',
    instrument: 'BTCUSD:DIX',
    side: 'BUY',
    leverage: 10n,
    quantity: 1n,
    limitPrice: 1n,
    chainId: 16182n,
  };
  const bad: Array<[string, SignedMessage]> = [
    ['uint8 overflow', { ...base, leverage: 256n }],
    ['negative', { ...base, quantity: -1n }],
    ['uint96 overflow', { ...base, quantity: 1n << 96n }],
    ['uint80 overflow', { ...base, limitPrice: 1n << 80n }],
    ['missing field', { ...base, side: undefined as unknown as string }],
    ['string for uint', { ...base, quantity: '1.5' }],
    ['lone surrogate', { ...base, instrument: 'a\ud800' }],
  ];
  for (const [label, msg] of bad) {
    assert.throws(() => typedDataDigest('New limit order', '16182', msg), Eip712EncodingError, label);
  }
  assert.throws(
    () => typedDataDigest('New limit order', '16182', { ...base, chainId: 1n << 256n }),
    Eip712EncodingError,
  );
  assert.throws(() => typedDataDigest('New limit order', '-1', base), Eip712EncodingError);
  assert.throws(() => typedDataDigest('Withdraw', '16182', { recipient: '0x1234', amount: 1n }), Eip712EncodingError);
  // wrong EIP-55 checksum (one letter's case flipped), as ethers refuses it
  const good = getAddress('0x52908400098527886e0f7030069857d2e4169ee7');
  const flipped = good.replace('E', 'e');
  assert.notEqual(flipped, good);
  assert.throws(() => typedDataDigest('Withdraw', '16182', { recipient: flipped, amount: 1n }), Eip712EncodingError);
  // all-lower and all-upper carry no checksum and are accepted
  typedDataDigest('Withdraw', '16182', { recipient: good.toLowerCase(), amount: 1n });
  typedDataDigest('Withdraw', '16182', { recipient: '0x' + good.slice(2).toUpperCase(), amount: 1n });
});

test('uint boundary values are accepted', () => {
  typedDataDigest('New limit order', '16182', {
    id: '',
    instrument: '',
    side: '',
    leverage: 255n,
    quantity: (1n << 96n) - 1n,
    limitPrice: (1n << 80n) - 1n,
    chainId: (1n << 256n) - 1n,
  });
});

test('normalizeAmount: round(v, 8) × 1e8, half-up, from strings and numbers', () => {
  assert.equal(normalizeAmount('0.1'), 10_000_000n);
  assert.equal(normalizeAmount(0.1), 10_000_000n);
  assert.equal(normalizeAmount(1.123456785), 112_345_679n);
  assert.equal(normalizeAmount('1.123456785'), 112_345_679n);
  assert.equal(normalizeAmount('1.123456784999'), 112_345_678n);
  assert.equal(normalizeAmount('65000'), 6_500_000_000_000n);
  assert.equal(normalizeAmount(20), 2_000_000_000n);
  assert.equal(normalizeAmount('0.000000005'), 1n);
  assert.equal(normalizeAmount('0.000000004'), 0n);
  assert.equal(normalizeAmount('1e-8'), 1n);
});
