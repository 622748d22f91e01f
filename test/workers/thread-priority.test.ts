import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';

// Runs in a worker so the test process's own priority is untouched.
test('lowerThreadPriority renices only the calling thread (Linux)', { skip: process.platform !== 'linux' && 'Linux only' }, async () => {
  const entry = new URL('../../src/workers/thread-priority.ts', import.meta.url).href;
  const code = `import('tsx/esm/api').then(async ({ register }) => {
    register();
    const { lowerThreadPriority } = await import(${JSON.stringify(entry)});
    const { getPriority } = await import('node:os');
    const before = getPriority(0);
    const ok = lowerThreadPriority(3);
    require('node:worker_threads').parentPort.postMessage({ ok, before, after: getPriority(0) });
  });`;
  const w = new Worker(code, { eval: true });
  const r = await new Promise<{ ok: boolean; before: number; after: number }>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  await w.terminate();
  assert.equal(r.ok, true);
  assert.equal(r.after, Math.min(19, r.before + 3));
  assert.equal(getPriority(0), r.before, 'the main thread keeps its priority');
});
