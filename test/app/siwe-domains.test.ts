/**
 * SIWE_DOMAINS: an operator serving the web terminal under its own host name lets that host sign in, and
 * only the hosts listed (the default keeps the public client's evedex.com and loopback).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/app/config.js';
import { clientSignIn, randomWallet } from '../auth/helpers.js';
import { assertError, http, ok, startTestExchange } from './client.js';

async function signIn(base: string, domain: string, uri: string) {
  const { nonce } = ok(await http(base, 'GET', '/auth/nonce')) as { nonce: string };
  return http(base, 'POST', '/auth/user/sign-up', await clientSignIn(randomWallet(), nonce, { domain, uri }));
}

test('SIWE_DOMAINS: the listed host signs in, hosts not listed are refused', async () => {
  const t = await startTestExchange({ SIWE_DOMAINS: 'trade.example.com, localhost:*' });
  try {
    const s = ok(await signIn(t.url, 'trade.example.com', 'https://trade.example.com/')) as { token: { accessToken: string } };
    assert.ok(s.token.accessToken.length > 20);
    ok(await signIn(t.url, 'localhost:5173', 'http://localhost:5173'));
    // No longer listed: the default's evedex.com, and a port the pattern does not name.
    assertError(await signIn(t.url, 'evedex.com', 'https://evedex.com'), 401, 'domain_not_allowed');
    assertError(await signIn(t.url, 'trade.example.com:8443', 'https://trade.example.com:8443'), 401, 'domain_not_allowed');
    // A non-loopback host over plain http is refused even when listed.
    assertError(await signIn(t.url, 'trade.example.com', 'http://trade.example.com'), 401, 'domain_not_allowed');
  } finally {
    await t.stop();
  }
});

test('SIWE_DOMAINS: the default accepts evedex.com and loopback only', async () => {
  const t = await startTestExchange();
  try {
    ok(await signIn(t.url, 'evedex.com', 'https://evedex.com'));
    ok(await signIn(t.url, '127.0.0.1:8080', 'http://127.0.0.1:8080'));
    assertError(await signIn(t.url, 'trade.example.com', 'https://trade.example.com'), 401, 'domain_not_allowed');
  } finally {
    await t.stop();
  }
});

test('SIWE_DOMAINS: malformed patterns stop the start with a clear error', () => {
  for (const bad of ['https://trade.example.com', 'a b', 'host:port', ' , ']) {
    assert.throws(() => loadConfig({ SIWE_DOMAINS: bad }), (err: unknown) => err instanceof ConfigError && /SIWE_DOMAINS/.test(err.message), bad);
  }
  assert.deepEqual(loadConfig({ SIWE_DOMAINS: 'a.example, b.example:*' }).siweDomains, ['a.example', 'b.example:*']);
});
