import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Wallet, hexlify, verifyTypedData, verifyMessage, hashMessage, randomBytes } from 'ethers';
import { eip712Domain, types, typedDataDigest } from '../../src/signing/eip712.js';
import { recoverSigner, personalMessageDigest } from '../../src/signing/recover.js';
import { secp256k1Backend } from '../../src/signing/secp256k1-backend.js';
import type { SignedMessage } from '../../src/signing/ports.js';

const CHAIN = '16182';
const wallets = Array.from({ length: 4 }, () => new Wallet(hexlify(randomBytes(32))));

function order(i: number): SignedMessage {
  return {
    id: `00001:${i.toString(16).padStart(26, '0')}`,
    instrument: 'BTCUSD:DIX',
    side: i % 2 ? 'BUY' : 'SELL',
    leverage: BigInt(1 + (i % 100)),
    quantity: BigInt(i + 1) * 1_000_000n,
    limitPrice: 6_500_000_000_000n + BigInt(i),
    chainId: 16182n,
  };
}

function ethersRecover(message: SignedMessage, signature: string): string | null {
  try {
    return verifyTypedData(eip712Domain(CHAIN), types['New limit order'], message, signature).toLowerCase();
  } catch {
    return null;
  }
}

test('the native libsecp256k1 bindings are loaded, not the elliptic fallback', () => {
  assert.equal(secp256k1Backend, 'native');
});

// A pool of genuine signatures (ethers signing is slow, so they are made once).
const signed = await Promise.all(
  Array.from({ length: 12 }, async (_, i) => {
    const wallet = wallets[i % wallets.length];
    const message = order(i);
    const signature = await wallet.signTypedData(eip712Domain(CHAIN), types['New limit order'], message);
    return { wallet, message, signature };
  }),
);

test('recovers the signer of ethers.Wallet.signTypedData, same as ethers.verifyTypedData', () => {
  for (const { wallet, message, signature } of signed) {
    const digest = typedDataDigest('New limit order', CHAIN, message);
    const ours = recoverSigner(digest, signature);
    assert.equal(ours, wallet.address.toLowerCase());
    assert.equal(ours, ethersRecover(message, signature));
  }
});

test('v = 0/1 is accepted like 27/28; upper-case hex is accepted', () => {
  const { wallet, message, signature } = signed[0];
  const digest = typedDataDigest('New limit order', CHAIN, message);
  const v = parseInt(signature.slice(130), 16);
  const v01 = signature.slice(0, 130) + (v - 27).toString(16).padStart(2, '0');
  assert.equal(recoverSigner(digest, v01), wallet.address.toLowerCase());
  assert.equal(ethersRecover(message, v01), wallet.address.toLowerCase());
  assert.equal(recoverSigner(digest, '0x' + signature.slice(2).toUpperCase()), wallet.address.toLowerCase());
});

test('malformed signatures → null', () => {
  const { message, signature } = signed[0];
  const digest = typedDataDigest('New limit order', CHAIN, message);
  const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const high = (N - BigInt('0x' + signature.slice(66, 130))).toString(16).padStart(64, '0');
  const cases: Record<string, string> = {
    empty: '',
    'no 0x': signature.slice(2),
    'too short': signature.slice(0, 128),
    'too long': signature + '00',
    '64-byte compact': signature.slice(0, 130),
    'non-hex': signature.slice(0, 10) + 'zz' + signature.slice(12),
    'v = 29': signature.slice(0, 130) + '1d',
    'v = 2': signature.slice(0, 130) + '02',
    'v = 37 (EIP-155)': signature.slice(0, 130) + '25',
    'r = 0': '0x' + '00'.repeat(32) + signature.slice(66),
    's = 0': signature.slice(0, 66) + '00'.repeat(32) + signature.slice(130),
    'r ≥ n': '0x' + 'ff'.repeat(32) + signature.slice(66),
    'high s (malleated)': signature.slice(0, 66) + high + signature.slice(130),
  };
  for (const [label, sig] of Object.entries(cases)) {
    assert.equal(recoverSigner(digest, sig), null, label);
  }
  assert.equal(recoverSigner(digest, undefined as unknown as string), null);
  assert.equal(recoverSigner(new Uint8Array(31), signature), null);
});

test('random corruptions: recoverSigner agrees with ethers.verifyTypedData', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: signed.length - 1 }),
      fc.integer({ min: 0, max: 64 }),
      fc.integer({ min: 0, max: 255 }),
      (k, pos, byte) => {
        const { message, signature } = signed[k];
        const bytes = Buffer.from(signature.slice(2), 'hex');
        bytes[pos] = byte;
        const sig = '0x' + bytes.toString('hex');
        // Deliberate narrowing: ethers also accepts v ≥ 35 (EIP-155); we refuse it.
        if (pos === 64 && byte >= 35) {
          assert.equal(recoverSigner(typedDataDigest('New limit order', CHAIN, message), sig), null);
          return;
        }
        assert.equal(recoverSigner(typedDataDigest('New limit order', CHAIN, message), sig), ethersRecover(message, sig));
      },
    ),
    { numRuns: 300 },
  );
});

test('personalMessageDigest equals ethers.hashMessage and recovers personal_sign signatures', async () => {
  for (const text of ['hello', 'https://evedex.com wants you to sign in\n\nünïcode ✓', '']) {
    assert.equal(hexlify(personalMessageDigest(text)), hashMessage(text));
    const sig = await wallets[1].signMessage(text);
    assert.equal(recoverSigner(personalMessageDigest(text), sig), verifyMessage(text, sig).toLowerCase());
  }
});
