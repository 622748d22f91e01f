/**
 * The layering rules of src/, checked on the import statements themselves (TypeScript's own pre-parser):
 * no import cycle between the top-level folders; the wire records import no store, auth or accounts module;
 * the demo simulation does not reach into the HTTP gateway; each exported contract type is declared once;
 * the ports (interfaces with adapters) live in their module's ports.ts; the composition root binds nothing late.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const SRC = resolve('src');

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const files = sourceFiles(SRC);
const text = new Map(files.map((f) => [f, readFileSync(f, 'utf8')]));

/** Top-level folder of a file under src/ ('app', 'engine', …). */
const folderOf = (file: string) => relative(SRC, file).split(sep)[0];
const rel = (file: string) => relative(resolve('.'), file);

interface Edge {
  from: string;
  to: string;
}

/** Every relative import/export/require/dynamic import of every file, resolved to a file under src/. */
const edges: Edge[] = files.flatMap((file) =>
  ts.preProcessFile(text.get(file)!, true, true).importedFiles
    .map((i) => i.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => ({ from: file, to: resolve(dirname(file), spec.replace(/\.js$/, '.ts')) })),
);

describe('architecture: imports', () => {
  test('the scan sees the code (every relative import resolves to a source file)', () => {
    assert.ok(files.length > 100, `${files.length} files`);
    assert.ok(edges.length > 500, `${edges.length} imports`);
    const unresolved = edges.filter((e) => !text.has(e.to) && !text.has(e.to.replace(/\.ts$/, '/index.ts')));
    assert.deepEqual(unresolved.map((e) => `${rel(e.from)} -> ${rel(e.to)}`), []);
  });

  test('no import cycle between the top-level folders of src/', () => {
    const graph = new Map<string, Set<string>>();
    for (const e of edges) {
      const a = folderOf(e.from);
      const b = folderOf(e.to);
      if (a === b) continue;
      if (!graph.has(a)) graph.set(a, new Set());
      graph.get(a)!.add(b);
    }
    // Depth-first search; a back edge closes a cycle, reported with the files that make each step.
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (node: string, path: string[]) => {
      state.set(node, 'open');
      for (const next of graph.get(node) ?? []) {
        if (state.get(next) === 'open') {
          const loop = [...path.slice(path.indexOf(next)), node, next];
          const steps = loop.slice(0, -1).map((a, i) => {
            const e = edges.find((x) => folderOf(x.from) === a && folderOf(x.to) === loop[i + 1])!;
            return `${a} -> ${loop[i + 1]} (${rel(e.from)} imports ${rel(e.to)})`;
          });
          cycles.push(steps.join('; '));
        } else if (!state.has(next)) {
          visit(next, [...path, node]);
        }
      }
      state.set(node, 'done');
    };
    for (const node of graph.keys()) if (!state.has(node)) visit(node, []);
    assert.deepEqual(cycles, []);
  });

  const importsOf = (folder: string, forbidden: string[]) =>
    edges
      .filter((e) => folderOf(e.from) === folder && forbidden.includes(folderOf(e.to)))
      .map((e) => `${rel(e.from)} imports ${rel(e.to)}`);

  test('src/records (wire shapes shared by REST and the channels) imports no store, auth or accounts module', () => {
    assert.deepEqual(importsOf('records', ['store', 'auth', 'accounts', 'statistics', 'api', 'realtime', 'app']), []);
  });

  test('src/simulation (the demo bots) does not import the HTTP gateway', () => {
    assert.deepEqual(importsOf('simulation', ['api', 'app']), []);
  });

  test('the engine imports nothing but the domain (and its own modules)', () => {
    const outside = edges.filter((e) => folderOf(e.from) === 'engine' && !['engine', 'domain', 'codec'].includes(folderOf(e.to)));
    assert.deepEqual(outside.map((e) => `${rel(e.from)} imports ${rel(e.to)}`), []);
  });
});

describe('architecture: declarations', () => {
  /** `export interface X`, `export type X =`, `export class X`, `export enum X` of every file. */
  const declared = new Map<string, string[]>();
  for (const [file, src] of text) {
    for (const m of src.matchAll(/^export\s+(?:declare\s+)?(?:abstract\s+)?(?:interface|type|class|enum)\s+([A-Za-z_]\w*)/gm)) {
      declared.set(m[1], [...(declared.get(m[1]) ?? []), rel(file)]);
    }
  }

  test('each exported type is declared once (imported everywhere else)', () => {
    const twice = [...declared].filter(([, where]) => where.length > 1).map(([name, where]) => `${name}: ${where.join(', ')}`);
    assert.deepEqual(twice, []);
  });

  test('the command and event contracts have one home each', () => {
    assert.deepEqual(declared.get('CommandInput'), ['src/engine/commands.ts']);
    assert.deepEqual(declared.get('Submit'), ['src/engine/commands.ts']);
    assert.deepEqual(declared.get('EventBatch'), ['src/engine/commands.ts']);
    assert.deepEqual(declared.get('Page'), ['src/store/types.ts']);
    // The gateway's history port and the opened read model are different things with different names.
    assert.deepEqual(declared.get('HistoryReader'), ['src/api/ports.ts']);
    assert.deepEqual(declared.get('ReadStore'), ['src/store/open.ts']);
  });

  test('ports (interfaces with adapters behind them) are declared in their module\'s ports.ts', () => {
    const ports: Record<string, string> = {
      CommandJournal: 'journal', SnapshotStore: 'journal', ChainNetwork: 'chain', IndexFeed: 'feeds', PriceSink: 'feeds',
      SignatureVerifier: 'signing', Broker: 'realtime', ChannelPublisher: 'realtime', Authorize: 'realtime',
      EventBroker: 'sequencer', SnapshotReplica: 'sequencer', AuthStore: 'auth', SessionEvents: 'auth', HistoryReader: 'api', NonceStore: 'auth',
      EngineFollower: 'cluster', CommandSubmitter: 'cluster',
    };
    for (const [name, folder] of Object.entries(ports)) assert.deepEqual(declared.get(name), [`src/${folder}/ports.ts`], name);
    // Every class that implements an interface of another module implements a port or a module's own API.
    const publicApis = new Set(['ExchangeEngine', 'AuthService']);
    const stray: string[] = [];
    for (const [file, src] of text) {
      for (const m of src.matchAll(/\bclass\s+\w+(?:<[^>]*>)?(?:\s+extends\s+[\w.<>]+)?\s+implements\s+([\w\s,<>]+?)\s*\{/g)) {
        for (const name of m[1].split(',').map((s) => s.trim().replace(/<.*$/, ''))) {
          const home = declared.get(name)?.[0];
          if (!home || home === rel(file) || publicApis.has(name)) continue;
          if (!home.endsWith('/ports.ts') && folderOf(resolve(home)) !== folderOf(file)) stray.push(`${rel(file)} implements ${name} (${home})`);
        }
      }
    }
    assert.deepEqual(stray, []);
    const oddlyNamed = files.filter((f) => /port/i.test(f.split(sep).pop()!) && !f.endsWith(`${sep}ports.ts`) && !/(import|export|report|support|transport)/i.test(f));
    assert.deepEqual(oddlyNamed.map(rel), [], 'port files are named ports.ts');
  });

  test('the composition root binds nothing late: no `let` in src/app/exchange.ts or the builders', () => {
    const roots = files.filter((f) => rel(f) === 'src/app/exchange.ts' || rel(f).startsWith('src/app/builders/'));
    assert.ok(roots.length >= 10);
    const lets = roots.flatMap((f) => [...text.get(f)!.matchAll(/^.*\blet\s+\w+.*$/gm)].map((m) => `${rel(f)}: ${m[0].trim()}`));
    assert.deepEqual(lets, []);
  });
});
