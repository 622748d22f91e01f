import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getAddress } from 'ethers';
import { AuthError } from '../../src/auth/types.js';
import { deriveSmartAccountAddress } from '../../src/auth/smart-account.js';
import { clientSignIn, makeService, randomWallet } from './helpers.js';

async function rejectsWith(p: Promise<unknown>, status: number, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof AuthError, `expected AuthError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.equal(err.status, status);
    return true;
  });
}

test('nonce: 17+ alphanumerics, distinct', async () => {
  const { auth, cleanup } = await makeService();
  try {
    const a = (await auth.issueNonce()).nonce;
    const b = (await auth.issueNonce()).nonce;
    assert.match(a, /^[A-Za-z0-9]{17,}$/);
    assert.notEqual(a, b);
  } finally {
    cleanup();
  }
});

test('full sign-in as the public client; first sign-in creates the user, later ones find it', async () => {
  const { auth, cleanup } = await makeService();
  try {
    const wallet = randomWallet();
    const firstBody = await clientSignIn(wallet, (await auth.issueNonce()).nonce);
    assert.ok(firstBody.message.startsWith('https://evedex.com wants you to sign in'));
    const first = await auth.signIn(firstBody);
    assert.match(first.user.id, /^[0-9a-f-]{36}$/);
    assert.match(first.user.authId, /^[0-9a-f-]{36}$/);
    assert.equal(first.user.exchangeId, 1);
    assert.equal(first.user.wallet, getAddress(wallet.address));
    assert.equal(first.user.role, 'user');
    assert.equal(first.user.smartAccountAddress, deriveSmartAccountAddress(wallet.address));
    assert.deepEqual(first.user.favoriteInstruments, []);
    assert.equal(typeof first.token.accessToken, 'string');
    assert.match(first.token.refreshToken, /^[A-Za-z0-9_-]{43}$/);

    const verified = await auth.verifyAccessToken(first.token.accessToken);
    assert.equal(verified?.user.id, first.user.id);

    // the same wallet in lower case signs in to the same account
    const body = await clientSignIn(wallet, (await auth.issueNonce()).nonce);
    const again = await auth.signIn({ ...body, wallet: wallet.address.toLowerCase() });
    assert.equal(again.user.id, first.user.id);
    assert.equal(again.user.exchangeId, 1);

    const other = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    assert.equal(other.user.exchangeId, 2);
    assert.equal((await auth.getUserByExchangeId(2))?.id, other.user.id);
    assert.equal((await auth.getUserById(first.user.id))?.exchangeId, 1);

    const admin = await auth.setRole(2, 'admin');
    assert.equal(admin.role, 'admin');
    await assert.rejects(auth.setRole(99, 'admin'), AuthError);
  } finally {
    cleanup();
  }
});

test('local development origins are accepted by default (localhost / 127.0.0.1, any port)', async () => {
  const { auth, cleanup } = await makeService();
  try {
    const w = randomWallet();
    await auth.signIn(await clientSignIn(w, (await auth.issueNonce()).nonce, { scheme: 'http', domain: 'localhost:5173', uri: 'http://localhost:5173' }));
    await auth.signIn(await clientSignIn(w, (await auth.issueNonce()).nonce, { scheme: 'http', domain: '127.0.0.1:8080', uri: 'http://127.0.0.1:8080/app' }));
  } finally {
    cleanup();
  }
});

test('nonce reuse, unknown and expired nonces are refused', async () => {
  const { auth, clock, cleanup } = await makeService({ nonceTtlSec: 60 });
  try {
    const wallet = randomWallet();
    const body = await clientSignIn(wallet, (await auth.issueNonce()).nonce);
    await auth.signIn(body);
    await rejectsWith(auth.signIn(body), 401, 'invalid_nonce');

    await rejectsWith(auth.signIn(await clientSignIn(wallet, 'abcdefgh12345678xyz')), 401, 'invalid_nonce');

    const late = await clientSignIn(wallet, (await auth.issueNonce()).nonce);
    clock.advance(61_000);
    await rejectsWith(auth.signIn(late), 401, 'invalid_nonce');
  } finally {
    cleanup();
  }
});

test('a failed attempt does not burn the nonce', async () => {
  const { auth, cleanup } = await makeService();
  try {
    const wallet = randomWallet();
    const nonce = (await auth.issueNonce()).nonce;
    const good = await clientSignIn(wallet, nonce);
    await rejectsWith(auth.signIn({ ...good, signature: '0x1234' }), 401, 'invalid_signature');
    await auth.signIn(good);
  } finally {
    cleanup();
  }
});

test('wrong chain, wrong wallet, foreign domain/URI, stale or premature messages are refused', async () => {
  const { auth, clock, cleanup } = await makeService();
  try {
    const wallet = randomWallet();
    const other = randomWallet();
    const n = async () => (await auth.issueNonce()).nonce;
    const iso = (ms: number) => new Date(clock.now() + ms).toISOString();

    await rejectsWith(auth.signIn(await clientSignIn(wallet, await n(), { chainId: 1 })), 401, 'wrong_chain');

    // message for `other`, body claims `wallet`
    const forOther = await clientSignIn(other, await n());
    await rejectsWith(auth.signIn({ ...forOther, wallet: wallet.address }), 401, 'wallet_mismatch');

    // message names `wallet` but `other` signed it
    const body = await clientSignIn(wallet, await n());
    const forged = { ...body, signature: await other.signMessage(body.message) };
    await rejectsWith(auth.signIn(forged), 401, 'invalid_signature');

    await rejectsWith(auth.signIn(await clientSignIn(wallet, await n(), { domain: 'evil.example' })), 401, 'domain_not_allowed');
    await rejectsWith(auth.signIn(await clientSignIn(wallet, await n(), { domain: 'evedex.com.evil.example' })), 401, 'domain_not_allowed');
    await rejectsWith(auth.signIn(await clientSignIn(wallet, await n(), { uri: 'https://evil.example' })), 401, 'domain_not_allowed');
    await rejectsWith(auth.signIn(await clientSignIn(wallet, await n(), { uri: 'http://evedex.com' })), 401, 'domain_not_allowed');

    await rejectsWith(auth.signIn(await clientSignIn(wallet, await n(), { expirationTime: iso(-1000) })), 401, 'message_expired');
    await rejectsWith(auth.signIn(await clientSignIn(wallet, await n(), { notBefore: iso(60_000) })), 401, 'message_not_yet_valid');
    await rejectsWith(auth.signIn(await clientSignIn(wallet, await n(), { issuedAt: iso(10 * 60_000) })), 401, 'message_not_yet_valid');
    // a not-yet-passed expiry and a past notBefore are fine
    await auth.signIn(await clientSignIn(wallet, await n(), { expirationTime: iso(60_000), notBefore: iso(-1000) }));

    const b = await clientSignIn(wallet, await n());
    await rejectsWith(auth.signIn({ ...b, nonce: (await auth.issueNonce()).nonce }), 401, 'nonce_mismatch');
    await rejectsWith(auth.signIn({ ...b, message: 'hello' }), 400, 'invalid_message');
    await rejectsWith(auth.signIn({ ...b, wallet: 'nope' }), 400, 'invalid_wallet');
    await rejectsWith(auth.signIn({ ...b, signature: undefined as unknown as string }), 400, 'invalid_body');
  } finally {
    cleanup();
  }
});

test('a custom allow-list replaces the default', async () => {
  const { auth, cleanup } = await makeService({ allowedDomains: ['exchange.example.org'] });
  try {
    const w = randomWallet();
    await rejectsWith(auth.signIn(await clientSignIn(w, (await auth.issueNonce()).nonce)), 401, 'domain_not_allowed');
    await auth.signIn(
      await clientSignIn(w, (await auth.issueNonce()).nonce, { domain: 'exchange.example.org', uri: 'https://exchange.example.org/login' }),
    );
  } finally {
    cleanup();
  }
});
