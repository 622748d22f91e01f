/**
 * A nats-server of a test's own (Debian's /usr/sbin/nats-server, as .ci/run starts the shared one), with
 * JetStream on a given store directory and a free port, so a test can kill and restart it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect as tcpConnect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';

/** The `skip` option of a test that starts its own server: as test/services.ts, a failure under CI. */
export function skipUnlessNatsServerBinary(): false | string {
  if (existsSync(NATS_SERVER)) return false;
  if (process.env.CI) throw new Error(`no nats-server at ${NATS_SERVER} (NATS_SERVER_BIN), and CI is set: apt-get install nats-server`);
  return `no nats-server at ${NATS_SERVER} (skipped outside CI)`;
}

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** True once the server greets with JetStream on. */
function greets(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port });
    socket.on('error', () => resolve(false));
    socket.once('data', (d: Buffer) => {
      socket.destroy();
      resolve(/"jetstream"\s*:\s*true/.test(d.toString('latin1')));
    });
  });
}

export class PrivateNats {
  private proc: ChildProcess | undefined;
  readonly url: string;

  /** `configFile`: a nats-server config (e.g. an `authorization` block) read besides the flags. */
  constructor(readonly port: number, readonly storeDir: string, readonly configFile?: string) {
    this.url = `nats://127.0.0.1:${port}`;
  }

  /** Starts it and waits (up to 20 s) until it answers with JetStream on. */
  async start(): Promise<void> {
    const config = this.configFile ? ['-c', this.configFile] : [];
    const proc = spawn(NATS_SERVER, [...config, '-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir], { stdio: 'ignore' });
    this.proc = proc;
    const exited = new Promise<never>((_, reject) => proc.once('exit', (code) => reject(new Error(`nats-server exited (${code}) on start`))));
    exited.catch(() => undefined);
    const deadline = Date.now() + 20_000;
    while (!(await Promise.race([greets(this.port), exited]))) {
      if (Date.now() > deadline) throw new Error(`nats-server on ${this.port} did not answer within 20 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops it with `signal` and waits for the exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    proc.kill(signal);
    await exited;
  }
}

/** Runs `fn` with a started server on a free port and a fresh store directory; kills it and removes the store after. */
export async function withPrivateNats<T>(fn: (nats: PrivateNats) => Promise<T>): Promise<T> {
  const storeDir = mkdtempSync(join(tmpdir(), 'perpx-nats-'));
  const nats = new PrivateNats(await freePort(), storeDir);
  try {
    await nats.start();
    return await fn(nats);
  } finally {
    await nats.stop('SIGKILL').catch(() => undefined);
    rmSync(storeDir, { recursive: true, force: true });
  }
}

/** Retries `open` (the client reconnects every 2 s, JetStream then recovers its streams) up to 20 s. */
export async function untilReconnected<T>(open: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      return await open();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
