/**
 * `npm run docs:config`: rewrites the configuration table of docs/configuration.md from CONFIG_VARS.
 * `--check`: exits 1 (changing nothing) when the committed table is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { CONFIG_DOC, withConfigTable } from './docs/config-table.js';

const current = readFileSync(CONFIG_DOC, 'utf8');
const next = withConfigTable(current);
if (process.argv.includes('--check')) {
  if (next !== current) {
    console.error(`${CONFIG_DOC} is out of date: run npm run docs:config`);
    process.exit(1);
  }
} else if (next !== current) {
  writeFileSync(CONFIG_DOC, next);
  console.log(`${CONFIG_DOC}: table rewritten`);
} else {
  console.log(`${CONFIG_DOC}: up to date`);
}
