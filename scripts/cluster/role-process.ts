/**
 * One cluster role (`perpx engine|gateway|projector`, src/app/main.ts) as a child process: started with its
 * environment, ready once its banner is printed (a gateway's banner gives its URLs), stopped with SIGTERM or
 * killed. Used by `npm run cluster`, the chaos tests and bench:cluster, so each drives real processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = join(ROOT, 'src/app/main.ts');
/** The flags of `npm start` (package.json), so each role runs as in production. */
const NODE_FLAGS = ['--max-semi-space-size=256', '--no-allocation-site-pretenuring'];

export type Role = 'engine' | 'gateway' | 'projector';

export interface RoleReady {
  /** A gateway's REST base URL (empty for the other roles). */
  url: string;
  /** The banner it printed (`perpx <role> (…)` and its indented lines). */
  banner: string;
}

export interface RoleProcessOptions {
  /** Copy its output to this process's stdout, each line prefixed with its name. */
  echo?: boolean;
  /**
   * Its own process group: a Ctrl-C at the terminal then reaches only the launcher, which stops the roles in
   * order (gateways before the engine) instead of all at once.
   */
  detached?: boolean;
  /** Append everything it prints to this file. */
  logTo?: string;
}

export class RoleProcess {
  readonly proc: ChildProcess;
  readonly ready: Promise<RoleReady>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it printed, for a failure's message. */
  output = '';

  constructor(readonly role: Role, readonly name: string, env: Record<string, string>, options: RoleProcessOptions = {}) {
    this.proc = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', MAIN, role], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env }, detached: options.detached ?? false,
    });
    const log = options.logTo === undefined ? undefined : createWriteStream(options.logTo, { flags: 'a' });
    this.exited = new Promise((resolve) => this.proc.once('exit', (code, signal) => {
      log?.end();
      resolve({ code, signal });
    }));
    this.ready = new Promise((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        const text = chunk.toString();
        log?.write(chunk);
        this.output = (this.output + text).slice(-20_000);
        if (options.echo) process.stdout.write(text.split('\n').filter(Boolean).map((l) => `[${name}] ${l}\n`).join(''));
        const banner = /^perpx (?:engine leader|gateway|projector) \(.*\n(?: {2}.*\n)*/m.exec(this.output);
        if (!banner) return;
        if (role === 'gateway') {
          const url = /REST API\s+(\S+)\/api/.exec(banner[0]);
          if (!url) return;
          resolve({ url: url[1], banner: banner[0].trimEnd() });
        } else resolve({ url: '', banner: banner[0].trimEnd() });
      };
      this.proc.stdout!.on('data', onData);
      this.proc.stderr!.on('data', onData);
      void this.exited.then(({ code, signal }) => reject(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${this.output}`)));
    });
    // A rejection nobody awaited (the process was stopped before it was ready) is not a crash of the caller.
    this.ready.catch(() => undefined);
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.running) this.proc.kill(signal);
    return this.exited;
  }

  /** Graceful stop (SIGTERM); SIGKILL after `timeoutMs`. */
  async stop(timeoutMs = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.running) return this.exited;
    const force = setTimeout(() => this.proc.kill('SIGKILL'), timeoutMs);
    try {
      return await this.kill('SIGTERM');
    } finally {
      clearTimeout(force);
    }
  }
}
