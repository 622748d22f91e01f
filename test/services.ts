/**
 * The servers the suite needs besides itself, and the one rule for them: a test that needs a server that does not
 * answer is skipped on a developer's machine (and says so), but under CI (`CI` set) it fails, so a green CI run
 * means every case ran. `.ci/run` starts PostgreSQL and NATS when they are down.
 *
 * PostgreSQL: STORE_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres), a role that may create
 * databases. NATS with JetStream: NATS_TEST_URL (default nats://127.0.0.1:4222).
 */
import { connect } from 'node:net';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.STORE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const NATS_TEST_URL = process.env.NATS_TEST_URL ?? 'nats://127.0.0.1:4222';

export type Service = 'postgres' | 'nats';

const WHERE: Record<Service, string> = { postgres: PG_ADMIN_URL, nats: NATS_TEST_URL };

async function postgresAnswers(): Promise<boolean> {
  // No connect timeout: a server that is down refuses at once, and a suite busy on its event loop (another
  // describe projecting a history) must not turn a slow answer into "unreachable".
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A NATS server greets every connection with `INFO {…}`; JetStream must be on (`"jetstream":true`). */
function natsAnswers(): Promise<boolean> {
  const url = new URL(NATS_TEST_URL);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port || 4222) });
    let greeting = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    // Only a guard against a peer that accepts and says nothing: a stopped server refuses at once.
    socket.setTimeout(30_000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('data', (d: Buffer) => {
      greeting += d.toString('latin1');
      if (greeting.includes('\r\n')) done(/^INFO .*"jetstream"\s*:\s*true/.test(greeting));
    });
  });
}

const answers: Partial<Record<Service, Promise<boolean>>> = {};

/** Whether the server answers now (asked once per process). */
export function reachable(service: Service): Promise<boolean> {
  answers[service] ??= service === 'postgres' ? postgresAnswers() : natsAnswers();
  return answers[service]!;
}

export class ServiceUnavailableUnderCi extends Error {
  override name = 'ServiceUnavailableUnderCi';
}

/**
 * True when the server answers. When it does not: false on a developer's machine (the caller skips), and under CI
 * a rejection, so the tests that needed it fail.
 */
export async function available(service: Service): Promise<boolean> {
  if (await reachable(service)) return true;
  if (process.env.CI) {
    throw new ServiceUnavailableUnderCi(`${service} does not answer at ${WHERE[service]}, and CI is set: the tests that need it fail instead of skipping (.ci/run starts it)`);
  }
  return false;
}

/** The `skip` option of a test that needs the server: false (run it) or the reason it is skipped. */
export async function skipUnless(service: Service): Promise<false | string> {
  return (await available(service)) ? false : `${service} does not answer at ${WHERE[service]} (skipped outside CI)`;
}

/**
 * The `skip` option of a test that needs a program installed on the machine (`path` where it was found): the
 * same rule as for servers, skipped outside CI with the way to install it, a failure under CI (`.ci/run`
 * installs it).
 */
export function skipUnlessInstalled(program: string, path: string | undefined, install: string): false | string {
  if (path !== undefined) return false;
  if (process.env.CI) throw new ServiceUnavailableUnderCi(`${program} is not installed, and CI is set: the tests that need it fail instead of skipping (.ci/run installs it)`);
  return `${program} is not installed (${install}; skipped outside CI)`;
}
