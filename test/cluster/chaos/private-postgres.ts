/**
 * A PostgreSQL server of a test's own (Debian's PostgreSQL 15 binaries, as .ci/run starts the shared one): a
 * fresh cluster made by initdb in a temporary directory, trust authentication, on a free port, so a chaos test
 * can SIGKILL it and start it again on the same data. PostgreSQL refuses to run as root, so under root it runs
 * as the `postgres` account (runuser), which owns the directory.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../journal/private-nats.js';

const PG_BIN = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';

/** The `skip` option of a test that starts its own PostgreSQL: as test/services.ts, a failure under CI. */
export function skipUnlessPostgresBinaries(): false | string {
  if (existsSync(join(PG_BIN, 'initdb'))) return false;
  if (process.env.CI) throw new Error(`no initdb in ${PG_BIN} (PG_BIN_DIR), and CI is set: apt-get install postgresql-15`);
  return `no initdb in ${PG_BIN} (skipped outside CI)`;
}

/** The account the server runs as: this one, or `postgres` when this is root. */
function runAs(): { uid: number; gid: number; prefix: string[] } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g'), prefix: ['runuser', '-u', 'postgres', '--'] };
}

export class PrivatePostgres {
  private proc: ChildProcess | undefined;
  private readonly root: string;
  private readonly dataDir: string;
  private readonly user = runAs();

  private constructor(readonly port: number) {
    this.root = mkdtempSync(join(tmpdir(), 'perpx-pg-'));
    this.dataDir = join(this.root, 'data');
    if (this.user) chownSync(this.root, this.user.uid, this.user.gid);
  }

  /** initdb on a fresh directory and a free port; not started yet. */
  static async create(): Promise<PrivatePostgres> {
    const server = new PrivatePostgres(await freePort());
    server.run(join(PG_BIN, 'initdb'), ['-D', server.dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    return server;
  }

  /** URL of the `postgres` database, for CREATE DATABASE. */
  get adminUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Starts it on the same data and waits (up to 30 s) until it takes connections. */
  async start(): Promise<void> {
    const [cmd, ...args] = [...(this.user?.prefix ?? []), join(PG_BIN, 'postgres'),
      '-D', this.dataDir, '-p', String(this.port), '-k', this.root, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'];
    const proc = spawn(cmd, args, { stdio: 'ignore' });
    this.proc = proc;
    const exited = new Promise<never>((_, reject) => proc.once('exit', (code) => reject(new Error(`postgres exited (${code}) on start`))));
    exited.catch(() => undefined);
    const deadline = Date.now() + 30_000;
    while (!(await Promise.race([this.answers(), exited]))) {
      if (Date.now() > deadline) throw new Error(`postgres on ${this.port} did not answer within 30 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * Kills the server (SIGKILL of the postmaster; its backends notice and exit) and waits until the port is free.
   * Under runuser the child is runuser itself, so the postmaster's pid comes from postmaster.pid.
   */
  async kill(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    const pid = this.postmasterPid();
    if (pid) process.kill(pid, 'SIGKILL');
    else proc.kill('SIGKILL');
    await exited;
    // Orphaned backends end on their own once the postmaster is gone; a restart waits for the shared memory.
    const deadline = Date.now() + 10_000;
    while (await this.answers() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  }

  /** Fast shutdown, then removes the directory. */
  async destroy(): Promise<void> {
    const proc = this.proc;
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      const pid = this.postmasterPid();
      if (pid) process.kill(pid, 'SIGINT');
      else proc.kill('SIGINT');
      const force = setTimeout(() => void this.kill(), 10_000);
      await exited;
      clearTimeout(force);
    }
    rmSync(this.root, { recursive: true, force: true });
  }

  private postmasterPid(): number | undefined {
    let pid: number;
    try {
      pid = Number(readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return undefined;
    }
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  }

  private async answers(): Promise<boolean> {
    const c = new pg.Client({ connectionString: this.adminUrl, connectionTimeoutMillis: 1000 });
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => undefined);
    }
  }

  private run(cmd: string, args: string[]): void {
    const [bin, ...rest] = [...(this.user?.prefix ?? []), cmd, ...args];
    const r = spawnSync(bin, rest, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr}`);
  }
}
