/**
 * NATS credentials in the configuration: at most one method (NATS_CREDS, NATS_USER + NATS_PASSWORD, NATS_TOKEN),
 * a user with its password, a creds file that is readable and holds a user JWT and an nkey seed; anything else is
 * a ConfigError at start rather than a connection that fails later or presents the wrong identity.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nkeys } from '@nats-io/transport-node';
import { ConfigError, loadConfig } from '../../src/app/config.js';

const natsAuthOf = (env: Record<string, string>) => loadConfig(env).nats.auth;

test('one NATS credential method at most, and complete', () => {
  assert.deepEqual(natsAuthOf({}), { kind: 'none' });
  assert.deepEqual(natsAuthOf({ NATS_USER: 'gw', NATS_PASSWORD: ' p w ' }), { kind: 'password', user: 'gw', password: ' p w ' }, 'a password is taken as given');
  assert.deepEqual(natsAuthOf({ NATS_TOKEN: 't0k' }), { kind: 'token', token: 't0k' });
  const refusals: [Record<string, string>, RegExp][] = [
    [{ NATS_USER: 'gw' }, /NATS_USER and NATS_PASSWORD go together/],
    [{ NATS_PASSWORD: 'p' }, /NATS_USER and NATS_PASSWORD go together/],
    [{ NATS_USER: 'gw', NATS_PASSWORD: 'p', NATS_TOKEN: 't' }, /set one of .* got NATS_USER\/NATS_PASSWORD and NATS_TOKEN/],
    [{ NATS_CREDS: '/nonexistent/x.creds', NATS_TOKEN: 't' }, /got NATS_CREDS and NATS_TOKEN/],
    [{ NATS_CREDS: '/nonexistent/x.creds' }, /NATS_CREDS: cannot read \/nonexistent\/x.creds/],
  ];
  for (const [env, message] of refusals) {
    assert.throws(() => loadConfig(env), (err: Error) => err instanceof ConfigError && message.test(err.message), JSON.stringify(env));
  }
});

test('NATS_CREDS must name a credentials file with a user JWT and an nkey seed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'perpx-creds-'));
  try {
    const seed = new TextDecoder().decode(nkeys.createUser().getSeed());
    const good = join(dir, 'gateway.creds');
    writeFileSync(good, `-----BEGIN NATS USER JWT-----\neyJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.sig\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`);
    assert.deepEqual(natsAuthOf({ NATS_CREDS: good }), { kind: 'creds', file: good });
    const bad = join(dir, 'not.creds');
    writeFileSync(bad, 'user: gateway\n');
    assert.throws(() => loadConfig({ NATS_CREDS: bad }), (err: Error) => err instanceof ConfigError && /is not a NATS credentials file/.test(err.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
