/**
 * Sign-in across a cluster's gateways (AUTH_STORE=postgres: nonces in PostgreSQL, src/auth/pg-nonce-store.ts): a
 * nonce fetched from gateway 1 signs in on gateway 2, a replay of the signed message is refused on either, and
 * when one signed message reaches both gateways at once exactly one sign-in succeeds.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CHAIN_ID, http, ok, type Res } from '../app/client.js';
import { clientSignIn, randomWallet } from '../auth/helpers.js';
import { skipUnless } from '../services.js';
import { startTestCluster, type TestCluster } from './test-cluster.js';

const skip = (await skipUnless('nats')) || (await skipUnless('postgres'));

async function signedSignIn(nonceFrom: string) {
  const wallet = randomWallet();
  const { nonce } = ok(await http(nonceFrom, 'GET', '/auth/nonce'), 'nonce') as { nonce: string };
  return { wallet, body: await clientSignIn(wallet, nonce, { chainId: Number(CHAIN_ID) }) };
}

const signIn = (gateway: string, body: unknown) => http(gateway, 'POST', '/auth/user/sign-up', body);

function assertInvalidNonce(res: Res, what: string): void {
  assert.equal(res.status, 401, `${what}: ${JSON.stringify(res.body)}`);
  assert.equal((res.body as { error: { code: string } }).error.code, 'invalid_nonce', what);
}

describe('sign-in on any gateway of a cluster', { skip }, () => {
  let C: TestCluster;
  before(async () => {
    C = await startTestCluster();
  });
  after(async () => {
    await C?.stop();
  });

  test('a nonce from gateway 1 signs in on gateway 2; the session works on gateway 1; replays are refused on both', async () => {
    const [g1, g2] = C.gateways.map((g) => g.url);
    const { wallet, body } = await signedSignIn(g1!);
    const session = ok(await signIn(g2!, body), 'sign-in on gateway 2') as { user: { wallet: string }; token: { accessToken: string } };
    assert.equal(session.user.wallet.toLowerCase(), wallet.address.toLowerCase());
    const me = ok(await http(g1!, 'GET', '/api/user/me', undefined, { authorization: `Bearer ${session.token.accessToken}` }), 'me on gateway 1') as { wallet: string };
    assert.equal(me.wallet.toLowerCase(), wallet.address.toLowerCase());
    assertInvalidNonce(await signIn(g2!, body), 'replay on gateway 2');
    assertInvalidNonce(await signIn(g1!, body), 'replay on gateway 1');
  });

  test('one signed message sent to both gateways at once: exactly one sign-in succeeds, every time', async () => {
    const [g1, g2] = C.gateways.map((g) => g.url);
    const attempts = await Promise.all(Array.from({ length: 10 }, (_, i) => signedSignIn(i % 2 ? g1! : g2!)));
    const raced = await Promise.all(attempts.map(({ body }) => Promise.all([signIn(g1!, body), signIn(g2!, body), signIn(g1!, body), signIn(g2!, body)])));
    for (const [i, replies] of raced.entries()) {
      const won = replies.filter((r) => r.status === 200);
      assert.equal(won.length, 1, `attempt ${i}: one winner among ${replies.map((r) => r.status).join(', ')}`);
      for (const r of replies.filter((x) => x.status !== 200)) assertInvalidNonce(r, `attempt ${i}, a loser`);
    }
  });
});
