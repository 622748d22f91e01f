// The rule of test/services.ts: a server that does not answer skips its tests on a developer's machine and
// fails them under CI. Checked on a port nothing listens on, in child processes with and without CI; and
// under CI, the servers the suite needs answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { reachable } from './services.js';

const run = promisify(execFile);

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function availableIn(env: Record<string, string | undefined>, service: 'postgres' | 'nats'): Promise<string> {
  const script = `import('./test/services.ts').then((s) => s.available('${service}')).then((v) => console.log('available', v), (e) => console.log('rejected', e.name))`;
  const { CI: _ci, ...rest } = process.env;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', script], { env: { ...rest, ...env } as NodeJS.ProcessEnv });
  return stdout.trim();
}

test('an unreachable server: skipped outside CI, a failure under CI', async () => {
  const port = await closedPort();
  const pgEnv = { STORE_TEST_PG_URL: `postgres://postgres@127.0.0.1:${port}/postgres` };
  const natsEnv = { NATS_TEST_URL: `nats://127.0.0.1:${port}` };
  assert.equal(await availableIn(pgEnv, 'postgres'), 'available false');
  assert.equal(await availableIn({ ...pgEnv, CI: '1' }, 'postgres'), 'rejected ServiceUnavailableUnderCi');
  assert.equal(await availableIn(natsEnv, 'nats'), 'available false');
  assert.equal(await availableIn({ ...natsEnv, CI: '1' }, 'nats'), 'rejected ServiceUnavailableUnderCi');
});

test('under CI, PostgreSQL and NATS with JetStream answer', { skip: process.env.CI ? false : 'CI is not set' }, async () => {
  assert.ok(await reachable('postgres'), 'PostgreSQL answers (.ci/run starts it)');
  assert.ok(await reachable('nats'), 'NATS with JetStream answers (.ci/run starts it)');
});
