// Runs the end-to-end test files (those that start an exchange with startTestExchange) against an in-process
// cluster instead of the single process: PERPX_TEST_TARGET=cluster (test/app/client.ts). Needs NATS with
// JetStream and PostgreSQL. Arguments filter the files by path, as in scripts/run-tests.mjs.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...collect(p));
    else if (name.endsWith('.test.ts') && readFileSync(p, 'utf8').includes('startTestExchange(')) out.push(p);
  }
  return out;
}

const filter = process.argv.slice(2);
let files = collect('test').sort();
if (filter.length) files = files.filter((f) => filter.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error(`no end-to-end test file matches ${filter.join(' ')}`);
  process.exit(1);
}
// Each file in its own process (node --test does that), one at a time: every file starts a whole cluster.
const res = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=1', ...files], {
  stdio: 'inherit',
  env: { ...process.env, PERPX_TEST_TARGET: 'cluster', LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
});
process.exit(res.status ?? 1);
