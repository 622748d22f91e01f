/**
 * Debian's haproxy in front of a cluster's gateways, so clients keep one URL while gateways come and go: its
 * configuration (HTTP mode, websocket upgrades tunnelled, health checks on GET /api/ping; no sticky rule: any
 * gateway serves any request, sign-in included, its nonces being in PostgreSQL) and the process itself
 * (foreground, stopped softly so the gateways can close their websockets first). Used by `npm run cluster` and
 * the gateway-kill test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

export interface HaproxyBackend {
  name: string;
  /** host:port of the gateway. */
  address: string;
}

export interface HaproxyOptions {
  /** Where clients connect: host and port of the frontend. */
  host: string;
  port: number;
  gateways: HaproxyBackend[];
  /** The configuration and the admin socket (haproxy.cfg, haproxy.sock) are written here. */
  dir: string;
}

/** Where haproxy is installed (Debian puts it in /usr/sbin, which a normal user's PATH may not list), if it is. */
export function findHaproxy(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs) {
    const path = join(dir, 'haproxy');
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

export const HAPROXY_MISSING = 'haproxy is not installed: on Debian or Ubuntu, `sudo apt-get install -y haproxy`';

/**
 * The configuration. HTTP mode so haproxy adds X-Forwarded-For (set TRUST_PROXY on the gateways) and checks
 * health at the HTTP level; a websocket upgrade becomes a tunnel with its own long timeout. A failed connect
 * is redispatched to another gateway, and a gateway that fails two checks 0.5 s apart gets no new connections.
 */
export function haproxyConfig(o: HaproxyOptions): string {
  return [
    'global',
    `  stats socket ${join(o.dir, 'haproxy.sock')} mode 600 level admin`,
    // A soft stop (SIGUSR1) waits for open connections at most this long.
    '  hard-stop-after 10s',
    '',
    'defaults',
    '  mode http',
    '  option forwardfor',
    '  option redispatch 1',
    '  retries 2',
    '  timeout connect 2s',
    // Above the gateways' keep-alive timeout (HTTP_KEEP_ALIVE_TIMEOUT_MS, 72 s), so the gateway closes an idle connection first.
    '  timeout client 75s',
    '  timeout server 75s',
    '  timeout http-request 10s',
    '  timeout tunnel 1h',
    '  timeout client-fin 5s',
    '',
    'frontend perpx',
    `  bind ${o.host}:${o.port}`,
    '  default_backend gateways',
    '',
    'backend gateways',
    // Websockets are long-lived: new ones go to the gateway with the fewest.
    '  balance leastconn',
    '  option httpchk GET /api/ping',
    '  http-check expect status 200',
    '  default-server inter 500ms fall 2 rise 1',
    ...o.gateways.map((g) => `  server ${g.name} ${g.address} check`),
    '',
  ].join('\n');
}

export class HaproxyProcess {
  readonly proc: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly url: string;
  readonly configPath: string;
  output = '';

  constructor(readonly options: HaproxyOptions, spawnOptions: { detached?: boolean } = {}) {
    const binary = findHaproxy();
    if (binary === undefined) throw new Error(HAPROXY_MISSING);
    this.configPath = join(options.dir, 'haproxy.cfg');
    writeFileSync(this.configPath, haproxyConfig(options));
    this.url = `http://${options.host}:${options.port}`;
    // -db: stay in the foreground, one process; SIGUSR1 is then a soft stop, SIGTERM an immediate one.
    this.proc = spawn(binary, ['-db', '-f', this.configPath], { stdio: ['ignore', 'pipe', 'pipe'], detached: spawnOptions.detached ?? false });
    const keep = (d: Buffer) => (this.output = (this.output + d.toString()).slice(-20_000));
    this.proc.stdout!.on('data', keep);
    this.proc.stderr!.on('data', keep);
    this.exited = new Promise((resolve) => this.proc.once('exit', (code, signal) => resolve({ code, signal })));
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Resolves once GET /api/ping through haproxy answers 200 (some gateway is up); rejects if haproxy exits. */
  async ready(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`haproxy exited (${this.proc.exitCode ?? this.proc.signalCode}):\n${this.output}`);
      const res = await fetch(`${this.url}/api/ping`).catch(() => undefined);
      if (res?.status === 200) return;
      if (Date.now() > deadline) throw new Error(`haproxy at ${this.url} did not reach a gateway within ${timeoutMs} ms:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Each gateway's state as haproxy's health checks see it (`UP`, `DOWN`, …), from the admin socket. */
  async serverStates(): Promise<Record<string, string>> {
    const csv = await adminCommand(join(this.options.dir, 'haproxy.sock'), 'show stat');
    const lines = csv.split('\n').filter((l) => l.length > 0);
    const header = lines[0].replace(/^# /, '').split(',');
    const [px, sv, status] = ['pxname', 'svname', 'status'].map((c) => header.indexOf(c));
    const states: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const f = line.split(',');
      if (f[px] === 'gateways' && f[sv] !== 'BACKEND') states[f[sv]] = f[status];
    }
    return states;
  }

  /** Soft stop: no new connections; open ones (websockets) get up to `hard-stop-after` to close. */
  softStop(): void {
    if (this.running) this.proc.kill('SIGUSR1');
  }

  /** Soft stop, then an immediate one after `timeoutMs`. */
  async stop(timeoutMs = 12_000): Promise<void> {
    if (!this.running) return;
    this.softStop();
    const force = setTimeout(() => this.proc.kill('SIGTERM'), timeoutMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(force);
    }
  }
}

function adminCommand(socketPath: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let out = '';
    socket.on('connect', () => socket.end(`${command}\n`));
    socket.on('data', (d: Buffer) => (out += d.toString()));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}
