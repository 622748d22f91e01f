import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TypedDataEncoder, Wallet, hexlify, randomBytes } from 'ethers';
import { createSignatureVerifier } from '../../src/signing/verifier.js';
import { eip712Domain, types, Eip712EncodingError } from '../../src/signing/eip712.js';
import type { SignedMessage } from '../../src/signing/ports.js';

const CHAIN = '16182';
const wallet = new Wallet(hexlify(randomBytes(32)));
const me = wallet.address.toLowerCase();

const withdraw: SignedMessage = { recipient: wallet.address, amount: 123_450_000n };
const withdrawSig = await wallet.signTypedData(eip712Domain(CHAIN), types.Withdraw, withdraw);
const replace: SignedMessage = { orderId: '00001:abcdefabcdefabcdefabcdefab', quantity: 5n, limitPrice: 7n };
const replaceSig = await wallet.signTypedData(eip712Domain(CHAIN), types['Replace limit order'], replace);

for (const threads of [0, 2]) {
  for (const digestOn of ['main', 'worker'] as const) {
    if (threads === 0 && digestOn === 'worker') continue;
    test(`verifier threads=${threads} digestOn=${digestOn}`, async () => {
      const v = createSignatureVerifier({ threads, digestOn });
      try {
        assert.equal(await v.recover('Withdraw', CHAIN, withdraw, withdrawSig), me);
        assert.equal(await v.recover('Replace limit order', CHAIN, replace, replaceSig), me);
        // signature of another message → some other address, never ours
        assert.notEqual(await v.recover('Withdraw', CHAIN, { ...withdraw, amount: 1n }, withdrawSig), me);
        // wrong chain → different digest
        assert.notEqual(await v.recover('Withdraw', '1', withdraw, withdrawSig), me);
        assert.equal(await v.recover('Withdraw', CHAIN, withdraw, '0xdead'), null);
        await assert.rejects(v.recover('Withdraw', CHAIN, { ...withdraw, amount: -1n }, withdrawSig), Eip712EncodingError);

        // a burst in one tick is batched and split across workers; order of results is kept
        const burst = await Promise.all(
          Array.from({ length: 200 }, (_, i) =>
            i % 3 === 0
              ? v.recover('Withdraw', CHAIN, withdraw, '0x' + '00'.repeat(65))
              : v.recover('Replace limit order', CHAIN, replace, replaceSig),
          ),
        );
        burst.forEach((a, i) => assert.equal(a, i % 3 === 0 ? null : me, `item ${i}`));

        // recoverWithDigest: the same signer plus the digest the wallet signed (ethers computes it independently),
        // for each item of a mixed batch
        const withdrawDigest = TypedDataEncoder.hash(eip712Domain(CHAIN), types.Withdraw, withdraw);
        const replaceDigest = TypedDataEncoder.hash(eip712Domain(CHAIN), types['Replace limit order'], replace);
        const mixed = await Promise.all(Array.from({ length: 40 }, (_, i) =>
          i % 2 === 0 ? v.recoverWithDigest('Withdraw', CHAIN, withdraw, withdrawSig) : v.recoverWithDigest('Replace limit order', CHAIN, replace, '0x' + '00'.repeat(65))));
        mixed.forEach((r, i) => {
          assert.equal(r.signer, i % 2 === 0 ? me : null, `signer ${i}`);
          assert.equal(hexlify(r.digest), i % 2 === 0 ? withdrawDigest : replaceDigest, `digest ${i}`);
        });
        await assert.rejects(v.recoverWithDigest('Withdraw', CHAIN, { ...withdraw, amount: -1n }, withdrawSig), Eip712EncodingError);
      } finally {
        await v.close();
      }
      await assert.rejects(v.recover('Withdraw', CHAIN, withdraw, withdrawSig), /closed/);
    });
  }
}

test('close() rejects requests still queued', async () => {
  const v = createSignatureVerifier({ threads: 1 });
  const pending = assert.rejects(v.recover('Withdraw', CHAIN, withdraw, withdrawSig), /closed/);
  await v.close();
  await pending;
});

test('a message value that cannot be cloned rejects that batch instead of crashing', async () => {
  const v = createSignatureVerifier({ threads: 1, digestOn: 'worker' });
  try {
    const bad = { ...withdraw, amount: (() => 1n) as unknown as bigint };
    await assert.rejects(v.recover('Withdraw', CHAIN, bad, withdrawSig));
    assert.equal(await v.recover('Withdraw', CHAIN, withdraw, withdrawSig), me);
  } finally {
    await v.close();
  }
});
