// Runs every test file under test/ with Node's built-in test runner (through tsx).
// Node 20's --test does not expand globs itself, so the files are listed here.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...collect(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

// `--coverage`: Node's built-in coverage report (lines, branches, functions per file) after the run.
const args = process.argv.slice(2);
const coverage = args.includes('--coverage') ? ['--experimental-test-coverage'] : [];
const filter = args.filter((a) => a !== '--coverage');
let files = collect('test').sort();
if (filter.length) files = files.filter((f) => filter.some((x) => f.includes(x)));
const res = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...coverage, ...files], {
  stdio: 'inherit',
  env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
});
process.exit(res.status ?? 1);
