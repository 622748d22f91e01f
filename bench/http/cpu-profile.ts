/**
 * CPU profile of this process's main thread (node:inspector), written as a .cpuprofile (open it in Chrome
 * DevTools or speedscope) and summarized as self time per function and per area of the code.
 * Worker threads (signature recovery) are not in it.
 */
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export class CpuProfiler {
  private session = new Session();

  async start(): Promise<void> {
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.setSamplingInterval', { interval: 200 });
    await this.session.post('Profiler.start');
  }

  async stop(file: string): Promise<Profile> {
    const { profile } = (await this.session.post('Profiler.stop')) as unknown as { profile: Profile };
    await this.session.post('Profiler.disable');
    this.session.disconnect();
    writeFileSync(file, JSON.stringify(profile));
    return profile;
  }
}

const HINT: Record<string, string> = { jose: ' = JWT verification', kysely: ' = read-model SQL (src/store)', fastify: ' = HTTP framework' };

/** Which part of the system a frame belongs to. */
function area(f: CallFrame): string {
  const u = f.url;
  if (!u) return f.functionName.startsWith('(') ? f.functionName : '(native / builtins)';
  if (u.startsWith('node:')) {
    if (/_http_|http_parser|node:http|node:net|stream|node:internal\/(net|stream|http)/.test(u)) return 'node: http / net / streams';
    return 'node: other internals';
  }
  const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
  if (m) {
    const pkg = m[1];
    if (pkg === 'fastify' || pkg.startsWith('@fastify/') || ['find-my-way', 'light-my-request', 'avvio', 'fast-json-stringify', 'secure-json-parse', 'fast-querystring', 'abstract-logging', 'toad-cache'].includes(pkg)) return 'fastify (+ its deps)';
    if (pkg === 'ajv' || pkg.startsWith('ajv-') || pkg === 'fast-uri' || pkg === '@sinclair/typebox') return 'validation (ajv/typebox)';
    return `npm: ${pkg}`;
  }
  const s = /\/src\/([^/]+)\//.exec(u);
  if (s) return `src/${s[1]}`;
  if (u.includes('/bench/')) return 'bench (this harness)';
  if (u.startsWith('evalmachine') || u.includes('ajv')) return 'validation (ajv/typebox)';
  return u.replace(/^file:\/\//, '').slice(-60);
}

/** Self time by area and by function; with `requests`, also µs per request (main thread). */
export function summarize(p: Profile, top = 25, requests = 0): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  if (p.samples && p.timeDeltas) {
    for (let i = 0; i < p.samples.length; i++) {
      const d = p.timeDeltas[i + 1] ?? 0;
      selfUs.set(p.samples[i], (selfUs.get(p.samples[i]) ?? 0) + d);
    }
  }
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** The innermost project file (src/…) on the stack, else the innermost npm package, else the area. */
  const ownerCache = new Map<number, string>();
  const owner = (id: number): string => {
    const hit = ownerCache.get(id);
    if (hit) return hit;
    let pkg: string | undefined;
    let result: string | undefined;
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const u = byId.get(cur)?.callFrame.url ?? '';
      const src = /\/(src\/.+)$/.exec(u);
      if (src && !u.includes('/node_modules/')) {
        result = src[1];
        break;
      }
      const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
      if (m && !pkg) pkg = `npm: ${m[1]}${HINT[m[1]] ?? ''} (async: no src/ caller on the stack)`;
    }
    result ??= pkg ?? area(byId.get(id)!.callFrame);
    ownerCache.set(id, result);
    return result;
  };
  let total = 0;
  const fn = new Map<string, number>();
  const ar = new Map<string, number>();
  const own = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id);
    if (!n) continue;
    total += us;
    const cf = n.callFrame;
    const file = cf.url.replace(/^file:\/\//, '').replace(/^.*\/(node_modules\/)/, '$1').replace(/^.*\/(src|bench)\//, '$1/');
    const key = `${cf.functionName || '(anonymous)'}  ${file}${cf.url ? ':' + (cf.lineNumber + 1) : ''}`;
    fn.set(key, (fn.get(key) ?? 0) + us);
    const a = area(cf);
    ar.set(a, (ar.get(a) ?? 0) + us);
    const o = owner(id);
    own.set(o, (own.get(o) ?? 0) + us);
  }
  const pct = (us: number) =>
    ((100 * us) / Math.max(1, total)).toFixed(1).padStart(5) + ' %' + (requests > 0 ? (us / requests).toFixed(1).padStart(8) + ' µs/req' : '');
  const lines: string[] = [];
  lines.push(`main-thread CPU profile: ${(total / 1000).toFixed(0)} ms sampled` + (requests > 0 ? ` over ${requests} requests` : ''));
  lines.push('self time by area:');
  for (const [k, us] of [...ar].sort((a, b) => b[1] - a[1])) lines.push(`  ${pct(us)}  ${k}`);
  lines.push('self time by the innermost project file on the stack (who caused it: SQLite, crypto, … under their src/ caller):');
  for (const [k, us] of [...own].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(us)}  ${k}`);
  lines.push(`top ${top} functions by self time:`);
  for (const [k, us] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(us)}  ${k}`);
  return lines.join('\n');
}

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

/**
 * Sampled allocations of this process's main thread, garbage included (V8 drops the samples of collected
 * objects unless told to keep them): where the GC's work comes from.
 */
export class AllocationSampler {
  private session = new Session();

  async start(): Promise<void> {
    this.session.connect();
    await this.session.post('HeapProfiler.enable');
    await this.session.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    } as never);
  }

  /** Allocated bytes per request by function (self), top `top`. */
  async stop(requests: number, top = 30): Promise<string> {
    const { profile } = (await this.session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: HeapNode } };
    await this.session.post('HeapProfiler.disable');
    this.session.disconnect();
    const self = new Map<string, number>();
    let total = 0;
    const walk = (n: HeapNode) => {
      const cf = n.callFrame;
      const file = cf.url.replace(/^file:\/\//, '').replace(/^.*\/(node_modules\/)/, '$1').replace(/^.*\/(src|bench)\//, '$1/');
      const key = `${cf.functionName || '(anonymous)'}  ${file}${cf.url ? ':' + (cf.lineNumber + 1) : ''}`;
      self.set(key, (self.get(key) ?? 0) + n.selfSize);
      total += n.selfSize;
      for (const c of n.children) walk(c);
    };
    walk(profile.head);
    const lines = [`main-thread allocations: ${(total / Math.max(1, requests)).toFixed(0)} B/req sampled; top ${top} functions (self):`];
    for (const [k, b] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${(b / Math.max(1, requests)).toFixed(0).padStart(7)} B/req  ${k}`);
    return lines.join('\n');
  }
}
