/**
 * Starts a worker thread on a sibling module of the caller, under tsx as well as from a compiled build.
 *
 * Under tsx the caller is a .ts file and so is the worker entry. `execArgv: ['--import', 'tsx']` does not
 * work for a .ts worker entry on Node 20 (it fails with ERR_UNKNOWN_FILE_EXTENSION: the loader hooks are not
 * active yet when the entry loads), so a two-line bootstrap registers tsx in the worker first and then
 * imports the entry. A compiled build (.js siblings) starts the worker directly.
 */
import { Worker } from 'node:worker_threads';

/**
 * Young generation of a worker, MB. V8 flags are per process, so without this every worker could grow the
 * main thread's large nursery (`--max-semi-space-size=256`, sized for the sequencer, which holds each result
 * until it is durable: docs/performance.md). Workers keep little alive between messages, so a small nursery suits them.
 */
const WORKER_YOUNG_GENERATION_MB = 96;

/** `callerUrl`: the caller's import.meta.url; `entry`: the sibling module's name without extension. */
export function startSiblingWorker(callerUrl: string, entry: string, workerData?: unknown): Worker {
  const resourceLimits = { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB };
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${entry}.js`, callerUrl), { workerData, resourceLimits });
  const href = new URL(`./${entry}.ts`, callerUrl).href;
  const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(href)}); });`;
  return new Worker(boot, { eval: true, workerData, resourceLimits });
}
