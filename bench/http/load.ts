/**
 * A small HTTP/1.1 keep-alive load generator on raw sockets (no pipelining: one request in flight per
 * connection). Requests are prebuilt byte buffers; responses are parsed just enough to find the status
 * and the end (Content-Length). It costs the load-generator process a few µs per request, which matters
 * on a 2-core machine where it shares the CPU with the server.
 *
 * Modes:
 * - closed: every connection sends its next request as soon as the previous answer arrived (max rate).
 * - open:   requests are released at a fixed rate (1 ms ticks) to idle connections; a released request
 *           that finds no idle connection waits, and its latency counts from its release time, so a
 *           server that falls behind shows it in the latency (no coordinated omission).
 *
 * Counted: responses that complete inside the measurement window (after the warm-up). Latency: release
 * (open) or write (closed) → last byte of the response, in ms with µs precision.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';

export interface LoadOptions {
  host: string;
  port: number;
  /** Several servers (a cluster's gateways): connection i goes to targets[i % length], instead of host:port. */
  targets?: ReadonlyArray<{ host: string; port: number }>;
  connections: number;
  mode: 'closed' | 'open';
  /** requests per second (open mode) */
  rate?: number;
  warmupMs: number;
  durationMs: number;
  /** The next request's bytes; null = nothing left to send (the pool of pre-signed orders ran out). */
  next: () => Buffer | null;
  /** Called when the measurement window opens / closes (the server process snapshots its CPU then). */
  onWindow?: (phase: 'start' | 'end') => void;
  /** Keep up to this many non-2xx response bodies (default 5). */
  keepErrorBodies?: number;
}

export interface LoadResult {
  completed: number;
  windowMs: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  /** count per HTTP status of responses inside the window */
  status: Record<string, number>;
  /** count per HTTP status over the whole run (warm-up included) */
  statusAll: Record<string, number>;
  errorBodies: string[];
  socketErrors: string[];
  reconnects: number;
  /** true when next() returned null before the window ended */
  exhausted: boolean;
  sent: number;
  /** open mode: largest number of released requests waiting for a free connection */
  maxWaiting: number;
  /** this (load-generator) process during the window: CPU ms (all threads) and event-loop utilization */
  clientCpuMs: number;
  clientElu: number;
}

class Samples {
  private a = new Float64Array(1 << 16);
  n = 0;
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
  sorted(): Float64Array {
    return this.a.slice(0, this.n).sort();
  }
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const HEADER_END = Buffer.from('\r\n\r\n');
// The load generator shares the cores with the server, so responses are parsed on the bytes: no header
// string, no regex per response (Node and Fastify write the name in lower case; others are matched too).
const CONTENT_LENGTH = [Buffer.from('\r\ncontent-length:'), Buffer.from('\r\nContent-Length:')];

/** The Content-Length value in the header block `buf[0, headerEnd)`, or -1 when absent. */
function contentLength(buf: Buffer, headerEnd: number): number {
  let at = -1;
  for (const name of CONTENT_LENGTH) {
    at = buf.indexOf(name);
    if (at >= 0 && at < headerEnd) {
      at += name.length;
      break;
    }
    at = -1;
  }
  if (at < 0) {
    const m = /\r\ncontent-length:[ \t]*(\d+)/i.exec(buf.toString('latin1', 0, headerEnd));
    return m ? Number(m[1]) : -1;
  }
  while (buf[at] === 32 || buf[at] === 9) at++;
  let n = 0;
  let digits = 0;
  for (; at < headerEnd && buf[at] >= 48 && buf[at] <= 57; at++, digits++) n = n * 10 + (buf[at] - 48);
  return digits > 0 ? n : -1;
}

export function runLoad(o: LoadOptions): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const keepBodies = o.keepErrorBodies ?? 5;
    const lat = new Samples();
    const status: Record<string, number> = {};
    const statusAll: Record<string, number> = {};
    const errorBodies: string[] = [];
    const socketErrors = new Set<string>();
    let reconnects = 0;
    let exhausted = false;
    let sent = 0;
    let phase: 'connecting' | 'warmup' | 'measure' | 'drain' | 'done' = 'connecting';
    let windowStart = 0;
    let windowEnd = 0;
    let cpu0: NodeJS.CpuUsage = process.cpuUsage();
    let cpuMs = 0;
    let elu0 = performance.eventLoopUtilization();
    let elu = 0;
    let completed = 0;

    // open mode
    const waiting: number[] = []; // release times of requests waiting for a connection
    let waitHead = 0;
    let released = 0;
    let openT0 = 0;
    let maxWaiting = 0;
    const idle: Conn[] = [];

    class Conn {
      socket!: net.Socket;
      busy = false;
      start = 0;
      chunks: Buffer[] = [];
      bytes = 0;
      headerLen = -1; // header length incl. CRLFCRLF once known
      total = -1; // full response length once known
      statusCode = 0;

      constructor(private readonly target: { host: string; port: number }) {
        this.connect();
      }

      connect(): void {
        const s = net.connect({ host: this.target.host, port: this.target.port, noDelay: true });
        this.socket = s;
        s.on('data', (d: Buffer) => this.onData(d));
        s.on('error', (e) => socketErrors.add(e.message));
        s.on('close', () => {
          if (s !== this.socket) return;
          if (phase === 'done') return;
          if (this.busy) {
            statusAll['socket-closed'] = (statusAll['socket-closed'] ?? 0) + 1;
            if (phase === 'measure') status['socket-closed'] = (status['socket-closed'] ?? 0) + 1;
          }
          this.busy = false;
          this.reset();
          if (phase === 'warmup' || phase === 'measure') {
            reconnects++;
            this.connect();
            this.socket.once('connect', () => this.ready());
          }
        });
      }

      reset(): void {
        this.chunks = [];
        this.bytes = 0;
        this.headerLen = -1;
        this.total = -1;
      }

      send(req: Buffer, start: number): void {
        this.busy = true;
        this.start = start;
        sent++;
        this.socket.write(req);
      }

      onData(d: Buffer): void {
        this.chunks.push(d);
        this.bytes += d.length;
        if (this.headerLen < 0) {
          const buf = this.chunks.length === 1 ? d : Buffer.concat(this.chunks, this.bytes);
          if (this.chunks.length > 1) this.chunks = [buf];
          const he = buf.indexOf(HEADER_END);
          if (he < 0) return;
          this.headerLen = he + 4;
          this.statusCode = (buf[9] - 48) * 100 + (buf[10] - 48) * 10 + (buf[11] - 48);
          const length = contentLength(buf, he);
          if (length < 0) {
            socketErrors.add(`response without content-length: ${buf.toString('latin1', 0, he).split('\r\n')[0]}`);
            this.socket.destroy();
            return;
          }
          this.total = this.headerLen + length;
        }
        if (this.bytes < this.total) return;
        const end = performance.now();
        const code = String(this.statusCode);
        statusAll[code] = (statusAll[code] ?? 0) + 1;
        if (phase === 'measure') {
          completed++;
          status[code] = (status[code] ?? 0) + 1;
          if (this.statusCode >= 200 && this.statusCode < 300) lat.push(end - this.start);
        }
        if ((this.statusCode < 200 || this.statusCode >= 300) && errorBodies.length < keepBodies) {
          const buf = Buffer.concat(this.chunks, this.bytes);
          errorBodies.push(`${code} ${buf.toString('utf8', this.headerLen, this.total).slice(0, 500)}`);
        }
        if (this.bytes > this.total) socketErrors.add('extra bytes after a response (unexpected with no pipelining)');
        this.reset();
        this.busy = false;
        this.ready();
      }

      /** The connection is free: give it work or park it. */
      ready(): void {
        if (phase !== 'warmup' && phase !== 'measure') return;
        if (o.mode === 'closed') {
          const req = o.next();
          if (!req) {
            exhausted = true;
            return;
          }
          this.send(req, performance.now());
        } else if (waitHead < waiting.length) {
          const req = o.next();
          if (!req) {
            exhausted = true;
            return;
          }
          this.send(req, waiting[waitHead++]);
          if (waitHead > 4096 && waitHead * 2 > waiting.length) {
            waiting.splice(0, waitHead);
            waitHead = 0;
          }
        } else {
          idle.push(this);
        }
      }
    }

    const conns: Conn[] = [];
    const targets = o.targets ?? [{ host: o.host, port: o.port }];
    for (let i = 0; i < o.connections; i++) conns.push(new Conn(targets[i % targets.length]));
    let connected = 0;
    let tick: NodeJS.Timeout | undefined;

    const tickOpen = () => {
      const now = performance.now();
      const due = Math.floor(((now - openT0) * (o.rate as number)) / 1000) - released;
      for (let k = 0; k < due; k++) {
        released++;
        let c = idle.pop();
        while (c && c.busy) c = idle.pop(); // a reconnected socket may have been parked twice
        if (c) {
          const req = o.next();
          if (!req) {
            exhausted = true;
            idle.push(c);
            continue;
          }
          c.send(req, now);
        } else {
          waiting.push(now);
        }
      }
      const w = waiting.length - waitHead;
      if (w > maxWaiting && phase === 'measure') maxWaiting = w;
    };

    const begin = () => {
      phase = 'warmup';
      if (o.mode === 'open') {
        if (!o.rate || o.rate <= 0) return reject(new Error('open mode needs a rate'));
        openT0 = performance.now();
        for (const c of conns) idle.push(c);
        tick = setInterval(tickOpen, 1);
      } else {
        for (const c of conns) c.ready();
      }
      setTimeout(() => {
        phase = 'measure';
        o.onWindow?.('start');
        windowStart = performance.now();
        cpu0 = process.cpuUsage();
        elu0 = performance.eventLoopUtilization();
        setTimeout(() => {
          windowEnd = performance.now();
          const c = process.cpuUsage(cpu0);
          cpuMs = (c.user + c.system) / 1000;
          elu = performance.eventLoopUtilization(elu0).utilization;
          o.onWindow?.('end');
          phase = 'drain';
          if (tick) clearInterval(tick);
          const deadline = Date.now() + 3000;
          const finish = () => {
            if (conns.some((c) => c.busy) && Date.now() < deadline) return void setTimeout(finish, 5);
            phase = 'done';
            for (const c of conns) c.socket.destroy();
            const sorted = lat.sorted();
            const windowMs = windowEnd - windowStart;
            let sum = 0;
            for (let i = 0; i < sorted.length; i++) sum += sorted[i];
            resolve({
              completed,
              windowMs,
              rps: (completed / windowMs) * 1000,
              p50: percentile(sorted, 50),
              p90: percentile(sorted, 90),
              p99: percentile(sorted, 99),
              max: sorted.length ? sorted[sorted.length - 1] : NaN,
              mean: sorted.length ? sum / sorted.length : NaN,
              status,
              statusAll,
              errorBodies,
              socketErrors: [...socketErrors].slice(0, 5),
              reconnects,
              exhausted,
              sent,
              maxWaiting,
              clientCpuMs: cpuMs,
              clientElu: elu,
            });
          };
          finish();
        }, o.durationMs);
      }, o.warmupMs);
    };

    for (const c of conns) {
      c.socket.once('connect', () => {
        if (++connected === o.connections) begin();
      });
      c.socket.once('error', (e) => {
        if (phase === 'connecting') reject(new Error(`connect to ${targets.map((t) => `${t.host}:${t.port}`).join(', ')} failed: ${e.message}`));
      });
    }
  });
}

/** A GET request's bytes. */
export function getRequest(host: string, port: number, path: string, headers: Record<string, string> = {}): Buffer {
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\n${extra}\r\n`, 'latin1');
}

/** A POST request's bytes with a JSON body. */
export function postJsonRequest(host: string, port: number, path: string, body: string, headers: Record<string, string> = {}): Buffer {
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const b = Buffer.from(body, 'utf8');
  const head = Buffer.from(
    `POST ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\n${extra}Content-Type: application/json\r\nContent-Length: ${b.length}\r\n\r\n`,
    'latin1',
  );
  return Buffer.concat([head, b]);
}
