// Real-time fan-out benchmark (`npm run bench:ws`). Not a test: prints a table.
//
// Phase 1: the Centrifugo-protocol server. 5,000 protocol clients on two order-book
// channels (2,500 each) + 1,000 clients each on its own private (recoverable) channel + one
// real centrifuge client. Books publish at 100 Hz each, private channels at 1 Hz each.
// Phase 2 (the ceiling): a bare `ws` server broadcasting the same payloads to the same
// connections, no protocol, no batching, one frame per message.
//
// The server runs in this process, the clients in a forked child, so each gets one core.
// Both phases use the same lean client (bench/ws/lean-client.ts: raw TCP, counts the messages of
// each frame without parsing them), so the client steals as little CPU from either server as it
// can. Every 20th connection is a probe: it parses its frames, checks that each counted message
// is a publication, and records latency = receive time - publish time carried in the payload
// (same host clock). CPU rows: process CPU time during the window per delivered message.
import { execSync, fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, WebSocket } from 'ws';
import { Centrifuge } from 'centrifuge';
import { LeanClient } from './ws/lean-client.js';
import { createRealtimeServer } from '../src/realtime/index.js';

const BOOK_CLIENTS = Number(process.env.BOOK_CLIENTS ?? 5000);
const PRIVATE_CLIENTS = Number(process.env.PRIVATE_CLIENTS ?? 1000);
const DURATION_MS = Number(process.env.DURATION_MS ?? 10_000);
/** The server's write delay (messages queued this long leave in one frame); WS_WRITE_DELAY_MS in the app. */
const WRITE_DELAY_MS = Number(process.env.WRITE_DELAY_MS ?? 0);
const BOOK_HZ = 100;
const PRIVATE_HZ = 1;
const BOOKS = ['bench:orderBook-BTC-0.1', 'bench:orderBook-ETH-0.1'];
const PING_LINE = /(?<=^|\n)\{\}(?=\n|$)/g;
const PROBE_EVERY = 20; // every 20th connection records latency (parsing every message would load the client core)

type Mode = 'protocol' | 'raw';
type ToChild = { type: 'start' } | { type: 'stop' } | { type: 'report' };
interface Ready {
  type: 'ready';
  opened: number;
  failed: number;
  errors: string[];
}
interface Report {
  type: 'report';
  received: number;
  windowMs: number;
  lat: { p50: number; p99: number; max: number; n: number };
  centrifuge?: { received: number; p50: number; p99: number };
  closedByServer: number;
  badFrames: number;
  errors: string[];
  /** Client process CPU time (user + system) during the window, ms. */
  cpuMs: number;
}

const now = () => performance.timeOrigin + performance.now();

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function channelOf(i: number): string {
  return i < BOOK_CLIENTS ? BOOKS[i % BOOKS.length] : `bench:order-${i - BOOK_CLIENTS}`;
}

// ---------------------------------------------------------------- client process

async function runClients(): Promise<void> {
  const mode = process.env.WS_BENCH_MODE as Mode;
  const url = process.env.WS_BENCH_URL!;
  const total = BOOK_CLIENTS + PRIVATE_CLIENTS;
  let counting = false;
  let cpu0 = process.cpuUsage();
  let cpuMs = 0;
  let received = 0;
  let windowStart = 0;
  let windowEnd = 0;
  let closedByServer = 0;
  /** Probed frames whose message count did not match their publications (must stay 0). */
  let badFrames = 0;
  let stopping = false;
  let lat = new Float64Array(1 << 16);
  let latN = 0;
  const addLat = (v: number) => {
    if (latN === lat.length) {
      const next = new Float64Array(lat.length * 2);
      next.set(lat);
      lat = next;
    }
    lat[latN++] = v;
  };
  const tsRe = /"ts":([0-9.]+)/g;
  const sockets: LeanClient[] = [];
  const errors = new Set<string>();
  let opened = 0;
  let failed = 0;
  const target = new URL(url);

  const open = (i: number) =>
    new Promise<void>((resolve) => {
      const probe = i % PROBE_EVERY === 0;
      const channel = channelOf(i);
      let ready = false;
      const client: LeanClient = new LeanClient(Number(target.port), target.hostname, target.pathname, {
        onOpen() {
          if (mode === 'raw') {
            client.sendText(channel);
          } else {
            const data = i >= BOOK_CLIENTS ? { accessToken: 'bench' } : undefined;
            const sub: Record<string, unknown> = { channel };
            if (data) Object.assign(sub, { data, recoverable: true });
            client.sendText(`{"id":1,"connect":{}}\n${JSON.stringify({ id: 2, subscribe: sub })}`);
          }
        },
        onText(text) {
          // Handshake replies (protocol) or the raw server's ack: only these few are parsed.
          if (mode === 'raw' ? text === 'ok' : text.includes('"id":2')) {
            ready = true;
            opened++;
            client.handshaking = false;
            client.keepPayload = probe;
            resolve();
            if (mode === 'protocol' && text.includes('"error"')) errors.add(text.slice(0, 120));
          }
        },
        onFrame(messages, parts) {
          if (!counting) return;
          received += messages;
          if (probe) {
            const t = now();
            const text = parts.length === 1 ? parts[0].toString('latin1') : Buffer.concat(parts).toString('latin1');
            tsRe.lastIndex = 0;
            let m: RegExpExecArray | null;
            let stamps = 0;
            while ((m = tsRe.exec(text))) {
              addLat(t - Number(m[1]));
              stamps++;
            }
            // Every counted message must be a timestamped publication or a server ping.
            if (stamps !== messages && stamps + (text.match(PING_LINE)?.length ?? 0) !== messages) badFrames++;
          }
        },
        onError(e) {
          errors.add(e.message);
          if (!ready) {
            failed++;
            ready = true;
            resolve();
          }
        },
        onClose() {
          if (!stopping) closedByServer++;
        },
      });
      sockets.push(client);
    });

  // Ramp up in batches: thousands of simultaneous SYNs overflow the listen backlog.
  for (let i = 0; i < total; i += 250) {
    const batch: Promise<void>[] = [];
    for (let j = i; j < Math.min(total, i + 250); j++) batch.push(open(j));
    await Promise.all(batch);
  }

  // One real centrifuge client on the first book, to prove the protocol with the real SDK.
  let cf: Centrifuge | null = null;
  const cfLat: number[] = [];
  let cfReceived = 0;
  if (mode === 'protocol') {
    cf = new Centrifuge(url, { websocket: WebSocket });
    const sub = cf.newSubscription(BOOKS[0]);
    sub.on('publication', (ctx) => {
      if (!counting) return;
      cfReceived++;
      cfLat.push(now() - (ctx.data as { ts: number }).ts);
    });
    const subscribed = new Promise<void>((r) => sub.once('subscribed', () => r()));
    cf.connect();
    sub.subscribe();
    await subscribed;
  }

  process.send!({ type: 'ready', opened, failed, errors: [...errors].slice(0, 5) } satisfies Ready);
  process.on('message', (msg: ToChild) => {
    if (msg.type === 'start') {
      counting = true;
      windowStart = now();
      cpu0 = process.cpuUsage();
    } else if (msg.type === 'stop') {
      windowEnd = now();
      counting = false;
      const cpu = process.cpuUsage(cpu0);
      cpuMs = (cpu.user + cpu.system) / 1000;
    } else if (msg.type === 'report') {
      const sorted = lat.slice(0, latN).sort();
      const cfSorted = Float64Array.from(cfLat).sort();
      stopping = true;
      process.send!({
        type: 'report',
        received,
        windowMs: windowEnd - windowStart,
        lat: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN, n: latN },
        centrifuge: cf ? { received: cfReceived, p50: percentile(cfSorted, 50), p99: percentile(cfSorted, 99) } : undefined,
        closedByServer,
        badFrames,
        errors: [...errors].slice(0, 5),
        cpuMs,
      } satisfies Report);
      cf?.disconnect();
      for (const s of sockets) s.terminate();
      setTimeout(() => process.exit(0), 100);
    }
  });
}

// ---------------------------------------------------------------- server process

function bookPayload(instrument: string, seq: number) {
  const mid = 60_000 + (seq % 100);
  const levels = (side: number) =>
    Array.from({ length: 10 }, (_, k) => [String(mid + side * (k + 1) * 0.5), String(((seq + k) % 37) + 0.125)]);
  const t = Date.now();
  return { instrument, orderBook: { t, asks: levels(1), bids: levels(-1) }, ts: now() };
}

function orderPayload(user: number, seq: number) {
  return { id: `o-${user}-${seq}`, status: 'OPEN', price: '60000.5', quantity: '0.01', updatedAt: Date.now(), ts: now() };
}

// A full GC before reading memory, without needing --expose-gc on the command line.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

interface Mem {
  heap: number;
  rss: number;
}
function memory(): Mem {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}
function perConn(a: Mem, b: Mem, n: number): Mem {
  return { heap: (b.heap - a.heap) / Math.max(1, n), rss: (b.rss - a.rss) / Math.max(1, n) };
}

function startClients(mode: Mode, url: string): Promise<{ child: ChildProcess; ready: Ready }> {
  const child = fork(process.argv[1], [], {
    env: { ...process.env, WS_BENCH_ROLE: 'clients', WS_BENCH_MODE: mode, WS_BENCH_URL: url },
    execArgv: process.execArgv,
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m: Ready) => resolve({ child, ready: m }));
    child.once('exit', (code) => reject(new Error(`client process exited ${code}`)));
  });
}

function ask<T>(child: ChildProcess, msg: ToChild): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m: T) => resolve(m));
    child.send(msg);
  });
}

interface PhaseResult {
  name: string;
  connections: number;
  failed: number;
  published: number;
  expected: number;
  report: Report;
  /** Server process CPU time during the window, ms. */
  cpuMs: number;
  memPerConn: Mem;
  extra: string;
  /** Websocket frames the server wrote during the window (one write per frame). */
  frames: number;
}

/** Publishes books at BOOK_HZ and private channels at PRIVATE_HZ for DURATION_MS. */
async function drive(publishBook: (ch: string, d: unknown) => void, publishPrivate: (i: number, d: unknown) => void) {
  let published = 0;
  let expected = 0;
  let seq = 0;
  const cpu0 = process.cpuUsage();
  const bookTimers = BOOKS.map((ch, b) => {
    let subscribers = 0;
    for (let i = 0; i < BOOK_CLIENTS; i++) if (i % BOOKS.length === b) subscribers++;
    return setInterval(() => {
      publishBook(ch, bookPayload(ch, seq++));
      published++;
      expected += subscribers;
    }, 1000 / BOOK_HZ);
  });
  // Private updates spread evenly over 10 ms ticks.
  const perTick = Math.max(1, Math.round((PRIVATE_CLIENTS * PRIVATE_HZ) / 100));
  let nextUser = 0;
  const privateTimer = setInterval(() => {
    for (let k = 0; k < perTick && PRIVATE_CLIENTS > 0; k++) {
      publishPrivate(nextUser, orderPayload(nextUser, seq++));
      nextUser = (nextUser + 1) % PRIVATE_CLIENTS;
      published++;
      expected++;
    }
  }, 10);
  await new Promise((r) => setTimeout(r, DURATION_MS));
  for (const t of bookTimers) clearInterval(t);
  clearInterval(privateTimer);
  const cpu = process.cpuUsage(cpu0);
  return { published, expected, cpuMs: (cpu.user + cpu.system) / 1000 };
}

async function phaseProtocol(): Promise<PhaseResult> {
  const rt = createRealtimeServer({
    authorize: async () => ({ allowed: true }),
    historyFor: (ch) => (ch.startsWith('bench:order-') ? { size: 100, ttlMs: 300_000 } : null),
    pingIntervalMs: 25_000,
    connectTimeoutMs: 60_000,
    writeDelayMs: WRITE_DELAY_MS,
  });
  const addr = await rt.listen(0, '127.0.0.1');
  const url = `ws://127.0.0.1:${addr.port}/connection/websocket`;
  const mem0 = memory();
  const { child, ready } = await startClients('protocol', url);
  await new Promise((r) => setTimeout(r, 1000));
  const mem1 = memory();
  const frames0 = rt.stats.framesSent;
  child.send({ type: 'start' });
  const { published, expected, cpuMs } = await drive(
    (ch, d) => void rt.publish(ch, d),
    (i, d) => void rt.publish(`bench:order-${i}`, d),
  );
  child.send({ type: 'stop' });
  const frames = rt.stats.framesSent - frames0;
  const report = await ask<Report>(child, { type: 'report' });
  const extra = `server: ${rt.stats.framesSent} frames for ${rt.stats.messagesSent} msgs, slow disconnects ${rt.stats.slowDisconnects}`;
  await rt.close();
  return {
    name: 'centrifugo-protocol server',
    connections: ready.opened,
    failed: ready.failed,
    published,
    expected,
    report,
    cpuMs,
    memPerConn: perConn(mem0, mem1, ready.opened),
    extra: extra + (ready.errors.length ? ` errors: ${ready.errors.join('; ')}` : ''),
    frames,
  };
}

async function phaseRaw(): Promise<PhaseResult> {
  const server = http.createServer();
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  const byChannel = new Map<string, Set<WebSocket>>();
  wss.on('connection', (ws) => {
    ws.once('message', (m) => {
      const ch = m.toString();
      let set = byChannel.get(ch);
      if (!set) byChannel.set(ch, (set = new Set()));
      set.add(ws);
      ws.send('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const mem0 = memory();
  const { child, ready } = await startClients('raw', url);
  await new Promise((r) => setTimeout(r, 1000));
  const mem1 = memory();
  let frames = 0;
  let counting = false;
  const broadcast = (ch: string, d: unknown) => {
    const set = byChannel.get(ch);
    if (!set) return;
    const buf = Buffer.from(JSON.stringify(d)); // encoded once, like the real server
    for (const ws of set) ws.send(buf, { binary: false });
    if (counting) frames += set.size;
  };
  child.send({ type: 'start' });
  counting = true;
  const { published, expected, cpuMs } = await drive(broadcast, (i, d) => broadcast(`bench:order-${i}`, d));
  counting = false;
  child.send({ type: 'stop' });
  const report = await ask<Report>(child, { type: 'report' });
  for (const ws of wss.clients) ws.terminate();
  await new Promise<void>((r) => wss.close(() => r()));
  await new Promise<void>((r) => server.close(() => r()));
  return {
    name: 'raw ws broadcast (ceiling)',
    connections: ready.opened,
    failed: ready.failed,
    published,
    expected,
    report,
    cpuMs,
    memPerConn: perConn(mem0, mem1, ready.opened),
    extra: ready.errors.length ? `errors: ${ready.errors.join('; ')}` : '',
    frames,
  };
}

function ulimit(): string {
  try {
    return execSync('ulimit -n', { shell: '/bin/sh' }).toString().trim();
  } catch {
    return 'unknown';
  }
}

function fmt(n: number, d = 0): string {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : 'n/a';
}

async function main(): Promise<void> {
  console.log(
    `ws bench: ${BOOK_CLIENTS} book clients on ${BOOKS.length} books @ ${BOOK_HZ} Hz, ` +
      `${PRIVATE_CLIENTS} private clients @ ${PRIVATE_HZ} Hz, ${DURATION_MS / 1000} s per phase, node ${process.version}`,
  );
  const p = await phaseProtocol();
  if (process.env.WS_BENCH_ONLY === 'protocol') {
    // Profiling aid: the protocol phase alone (`WS_BENCH_ONLY=protocol node --cpu-prof ...`).
    console.log(`delivered ${fmt(p.report.received / (p.report.windowMs / 1000))} msgs/s, p50 ${fmt(p.report.lat.p50, 2)} ms, p99 ${fmt(p.report.lat.p99, 2)} ms; ${p.extra}`);
    return;
  }
  await new Promise((r) => setTimeout(r, 500));
  const r = await phaseRaw();
  // Below target means the server's event loop was saturated and the publish timers ran late.
  const target = (DURATION_MS / 1000) * (BOOKS.length * BOOK_HZ + PRIVATE_CLIENTS * PRIVATE_HZ);
  const rate = (x: PhaseResult) => x.report.received / (x.report.windowMs / 1000);
  const rows: [string, string, string, string][] = [
    ['', p.name, r.name, 'protocol / raw'],
    ['connections (failed)', `${fmt(p.connections)} (${p.failed})`, `${fmt(r.connections)} (${r.failed})`, ''],
    ['publications (target)', `${fmt(p.published)} (${fmt(target)})`, `${fmt(r.published)} (${fmt(target)})`, ''],
    ['delivered msgs/s', fmt(rate(p)), fmt(rate(r)), fmt(rate(p) / rate(r), 2)],
    ['delivered / expected', fmt((100 * p.report.received) / p.expected, 1) + ' %', fmt((100 * r.report.received) / r.expected, 1) + ' %', ''],
    ['server CPU µs / msg', fmt((1000 * p.cpuMs) / p.report.received, 2), fmt((1000 * r.cpuMs) / r.report.received, 2), ''],
    ['frames written / s (msgs per frame)', `${fmt(p.frames / (DURATION_MS / 1000))} (${fmt(p.report.received / Math.max(1, p.frames), 1)})`, `${fmt(r.frames / (DURATION_MS / 1000))} (1.0)`, ''],
    ['server CPU µs / frame', fmt((1000 * p.cpuMs) / Math.max(1, p.frames), 2), fmt((1000 * r.cpuMs) / Math.max(1, r.frames), 2), ''],
    ['client CPU µs / msg', fmt((1000 * p.report.cpuMs) / p.report.received, 2), fmt((1000 * r.report.cpuMs) / r.report.received, 2), ''],
    ['latency p50 ms', fmt(p.report.lat.p50, 2), fmt(r.report.lat.p50, 2), fmt(p.report.lat.p50 / r.report.lat.p50, 2)],
    ['latency p99 ms', fmt(p.report.lat.p99, 2), fmt(r.report.lat.p99, 2), fmt(p.report.lat.p99 / r.report.lat.p99, 2)],
    ['latency max ms', fmt(p.report.lat.max, 1), fmt(r.report.lat.max, 1), ''],
    ['server heap / idle conn', fmt(p.memPerConn.heap / 1024, 1) + ' KiB', fmt(r.memPerConn.heap / 1024, 1) + ' KiB', fmt(p.memPerConn.heap / r.memPerConn.heap, 2)],
    ['server rss / idle conn', fmt(p.memPerConn.rss / 1024, 1) + ' KiB', fmt(r.memPerConn.rss / 1024, 1) + ' KiB', fmt(p.memPerConn.rss / r.memPerConn.rss, 2)],
    ['closed by server', fmt(p.report.closedByServer), fmt(r.report.closedByServer), ''],
    ['probed frames miscounted', fmt(p.report.badFrames), fmt(r.report.badFrames), ''],
  ];
  const widths = [0, 1, 2, 3].map((c) => Math.max(...rows.map((row) => row[c].length)));
  for (const row of rows) console.log(row.map((cell, c) => cell.padEnd(widths[c])).join(' | '));
  // The write floor: every frame is one socket write (a syscall that also runs the loopback receive path).
  // One core writing each of the book connections once, at the raw server's CPU per frame, needs this long;
  // a message waits for its connection's next write, so with every message delivered p99 cannot go below it.
  const rawFrameUs = (1000 * r.cpuMs) / Math.max(1, r.frames);
  console.log(
    `write floor: ${fmt(rawFrameUs, 2)} µs CPU per frame (raw phase) × ${fmt(BOOK_CLIENTS)} book connections = ` +
      `${fmt((rawFrameUs * BOOK_CLIENTS) / 1000, 1)} ms for one core to write each book connection once`,
  );
  if (p.report.centrifuge) {
    const c = p.report.centrifuge;
    console.log(`real centrifuge client on ${BOOKS[0]}: ${fmt(c.received)} publications, p50 ${fmt(c.p50, 2)} ms, p99 ${fmt(c.p99, 2)} ms`);
  }
  console.log(p.extra);
  for (const x of [p, r]) if (x.report.errors.length) console.log(`${x.name} client errors: ${x.report.errors.join('; ')}`);
  console.log('memory: heap after a full GC is the meaningful figure; rss of the 2nd phase reuses pages freed by the 1st.');
  if (r.extra) console.log(r.extra);
  if (p.failed + r.failed > 0) {
    console.log(`WARNING: ${p.failed + r.failed} connections failed — check \`ulimit -n\` (now ${ulimit()}) and the listen backlog.`);
  }
}

if (process.env.WS_BENCH_ROLE === 'clients') {
  runClients().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
