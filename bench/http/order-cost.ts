// CPU cost of one signed limit order through the whole server, per thread (not a test):
//   node --import tsx bench/http/order-cost.ts
// The exchange as bench:http (3a) runs it (same config, SIGNATURE_THREADS=2, 128 wallets, BTCUSDT resting
// orders); everything client-side (SIWE sign-in, pre-signing, the closed-loop load on raw sockets) runs in a
// forked child, so this process is the server alone. Prints, for the measured window, the server's CPU per
// order by thread kind (from /proc): a quicker A/B than the whole bench:http (run the two sides in turn,
// several times; other jobs on the machine move the numbers).
//
// Instruction counts instead (independent of other jobs on the machine), with every part on the event loop
// (no worker threads: under valgrind their isolates fail to reserve code ranges):
//   SIGNATURE_THREADS=0 JOURNAL_WRITER=inline READ_MODEL_WRITER=inline SNAPSHOT_WRITER=inline ORDER_COST_CALLGRIND=1 \
//   ORDERS=6000 WARMUP_MS=30000 DURATION_MS=30000 valgrind --tool=callgrind --instr-atstart=no \
//   --callgrind-out-file=/tmp/oc.out node --single-threaded --import tsx bench/http/order-cost.ts
// counts the measured window only (callgrind_control toggles it; the load-generator child is not traced);
// callgrind_annotate --inclusive=yes then splits it (recoverSigner, project, the journal's commit…).
// Env: ORDERS (pre-signed, 30000), WARMUP_MS (5000), DURATION_MS (10000), CONNECTIONS (100), WALLETS (128), and
// the exchange's SIGNATURE_THREADS, JOURNAL_WRITER, READ_MODEL_WRITER, READ_MODEL_LINGER_MS, SNAPSHOT_WRITER.
import { fork, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Wallet } from 'ethers';
import { SiweMessage } from 'siwe';
import { runClientProcess, type FromClient, type ToClient } from './client.js';
import { RAISED_BUDGET_ENV } from '../raised-budgets.js';

const env = process.env;
const ORDERS = Number(env.ORDERS ?? 30_000);
const WARMUP_MS = Number(env.WARMUP_MS ?? 5000);
const DURATION_MS = Number(env.DURATION_MS ?? 10_000);
const CONNECTIONS = Number(env.CONNECTIONS ?? 100);
const WALLETS = Number(env.WALLETS ?? 128);
const HOST = '127.0.0.1';
/** Exchange settings taken from the environment when set. */
const PASS_THROUGH = ['SIGNATURE_THREADS', 'JOURNAL_WRITER', 'READ_MODEL_WRITER', 'READ_MODEL_LINGER_MS', 'SNAPSHOT_WRITER'];
const CALLGRIND = env.ORDER_COST_CALLGRIND === '1';

type SignInRequest = { type: 'signin'; url: string; chainId: string; count: number };
type SignInReply = { type: 'signedin'; wallets: Array<{ privateKey: string; token: string; exchangeId: number }> };

async function json(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.url} → ${res.status} ${text}`);
  return JSON.parse(text);
}

async function signIn(url: string, chainId: string, wallet: Wallet): Promise<{ privateKey: string; token: string; exchangeId: number }> {
  const { nonce } = (await json(await fetch(`${url}/auth/nonce`))) as { nonce: string };
  const message = new SiweMessage({
    domain: 'evedex.com', address: wallet.address, statement: 'Sign in to evedex.com', uri: 'https://evedex.com', version: '1',
    chainId: Number(chainId), nonce,
  }).prepareMessage();
  const signature = await wallet.signMessage(message);
  const res = (await json(await fetch(`${url}/auth/user/sign-up`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wallet: wallet.address, message, nonce, signature }),
  }))) as { token: { accessToken: string } };
  const token = res.token.accessToken;
  const me = (await json(await fetch(`${url}/api/user/me`, { headers: { authorization: `Bearer ${token}` } }))) as { exchangeId: number };
  return { privateKey: wallet.privateKey, token, exchangeId: me.exchangeId };
}

function threadCpuMs(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const comm = readFileSync(`/proc/self/task/${tid}/comm`, 'latin1').trim();
      const name = Number(tid) === process.pid ? 'main' : comm.startsWith('perpx-') ? comm.slice(6) : 'Node/V8 helpers';
      out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) * 10);
      out.set(`${name} (kernel)`, (out.get(`${name} (kernel)`) ?? 0) + Number(f[12]) * 10);
    } catch {
      // thread gone
    }
  }
  return out;
}

async function server(): Promise<void> {
  const { loadConfig } = await import('../../src/app/config.js');
  const { startExchange } = await import('../../src/app/exchange.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'perpx-order-cost-'));
  const ex = await startExchange(loadConfig({
    PORT: '0', HOST, DATA_DIR: dataDir, LOG_LEVEL: 'silent', SEED_DEMO: 'true', MARKET_MAKERS: '0', INDEX_FEED: 'off',
    FUNDING_INTERVAL_MS: '0', DEMO_WALLET: 'false', SIGNATURE_THREADS: '2', ACCESS_TOKEN_TTL_SEC: '3600', ...RAISED_BUDGET_ENV,
    ...Object.fromEntries(PASS_THROUGH.filter((k) => env[k] !== undefined).map((k) => [k, env[k]])),
  }));
  const child = fork(new URL(import.meta.url).pathname, [], { env: { ...env, ORDER_COST_ROLE: 'client' }, execArgv: ['--import', 'tsx'] });
  const waiters: Array<{ type: string; resolve: (m: unknown) => void }> = [];
  let onWindow: (phase: 'start' | 'end') => void = () => undefined;
  child.on('message', (m: FromClient | SignInReply) => {
    if (m.type === 'window') return onWindow(m.phase);
    if (m.type === 'error') throw new Error(`client: ${m.message}`);
    const i = waiters.findIndex((w) => w.type === m.type);
    if (i >= 0) waiters.splice(i, 1)[0]!.resolve(m);
  });
  const ask = <T>(msg: ToClient | SignInRequest, reply: string): Promise<T> =>
    new Promise((resolve) => {
      waiters.push({ type: reply, resolve: resolve as (m: unknown) => void });
      child.send(msg);
    });
  try {
    await new Promise<void>((resolve) => waiters.push({ type: 'hello', resolve: () => resolve() }));
    const target = { host: HOST, port: Number(new URL(ex.url).port) };
    const { wallets } = await ask<SignInReply>({ type: 'signin', url: ex.url, chainId: ex.chainId, count: WALLETS }, 'signedin');
    for (const [i, w] of wallets.entries()) {
      const r = await ex.sequencer.submit({
        kind: 'funds.deposit', userId: w.exchangeId, amount: String(10_000_000n * 100_000_000n), transferId: `cost-${i}-${randomBytes(6).toString('hex')}`,
      });
      if (!r.reply.ok) throw new Error(`deposit refused: ${JSON.stringify(r.reply)}`);
    }
    await ask({
      type: 'prepare', target, chainId: ex.chainId, count: ORDERS, levels: 20_000, seed: 1,
      wallets: wallets.map((w) => ({ privateKey: w.privateKey, header: ['Authorization', `Bearer ${w.token}`] as [string, string] })),
    }, 'prepared');
    let t0 = new Map<string, number>();
    let t1 = new Map<string, number>();
    onWindow = (phase) => {
      if (CALLGRIND) spawnSync('callgrind_control', ['-i', phase === 'start' ? 'on' : 'off', String(process.pid)], { stdio: 'ignore' });
      if (phase === 'start') t0 = threadCpuMs();
      else t1 = threadCpuMs();
    };
    const res = await ask<Extract<FromClient, { type: 'result' }>>({
      type: 'load', id: 1, target, request: { kind: 'orders' }, mode: 'closed', connections: CONNECTIONS, warmupMs: WARMUP_MS, durationMs: DURATION_MS,
    }, 'result');
    const n = res.result.completed;
    if (n === 0) console.log(`no order completed in the window: ${JSON.stringify({ ...res.result, latencies: undefined })}`);
    const bad = Object.entries(res.result.status).filter(([k]) => !k.startsWith('2'));
    const perOrder = (name: string) => (((t1.get(name) ?? 0) - (t0.get(name) ?? 0)) * 1000) / Math.max(1, n);
    const parts = [...t1.keys()].filter((k) => !k.endsWith(' (kernel)')).map((name) => [name, perOrder(name)] as const).filter(([, us]) => us >= 0.5);
    const total = parts.reduce((s, [, us]) => s + us, 0);
    console.log(`order-cost: ${n} orders in the window (${((n / res.result.windowMs) * 1000).toFixed(0)}/s, p99 ${res.result.p99?.toFixed(1)} ms${bad.length ? `, non-2xx ${JSON.stringify(bad)}` : ''}${res.result.exhausted ? ', POOL RAN OUT' : ''})`);
    console.log(`  CPU µs/order: total ${total.toFixed(0)} = ${parts.sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(0)} (kernel ${perOrder(`${k} (kernel)`).toFixed(0)})`).join(', ')}`);
  } finally {
    child.send({ type: 'exit' } satisfies ToClient);
    await ex.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (env.ORDER_COST_ROLE === 'client') {
  process.on('message', (m: SignInRequest) => {
    if (m.type !== 'signin') return;
    void (async () => {
      const wallets: SignInReply['wallets'] = [];
      const all = Array.from({ length: m.count }, () => Wallet.createRandom() as unknown as Wallet);
      for (let i = 0; i < all.length; i += 8) wallets.push(...(await Promise.all(all.slice(i, i + 8).map((w) => signIn(m.url, m.chainId, w)))));
      process.send!({ type: 'signedin', wallets } satisfies SignInReply);
    })();
  });
  runClientProcess();
} else {
  server().then(() => process.exit(0), (err) => {
    console.error(err);
    process.exit(1);
  });
}
