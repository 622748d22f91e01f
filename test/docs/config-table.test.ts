// docs/configuration.md's table is generated from CONFIG_VARS (npm run docs:config); these fail while the
// committed table is stale or a variable the configuration reads is not declared.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CONFIG_VARS, loadConfig } from '../../src/app/config.js';
import { CONFIG_DOC, renderConfigTable, withConfigTable } from '../../scripts/docs/config-table.js';

test('docs/configuration.md carries the table CONFIG_VARS generates (run npm run docs:config)', () => {
  const committed = readFileSync(CONFIG_DOC, 'utf8');
  assert.equal(committed, withConfigTable(committed), `${CONFIG_DOC} is out of date: run npm run docs:config`);
  for (const v of CONFIG_VARS) assert.ok(committed.includes(`| \`${v.env}\` |`), `${v.env} missing from ${CONFIG_DOC}`);
});

test('a stale table is told apart from the generated one', () => {
  const doc = withConfigTable(readFileSync(CONFIG_DOC, 'utf8'));
  const stale = doc.replace(/^\| `PORT` \|.*\n/m, '');
  assert.notEqual(stale, doc);
  assert.notEqual(withConfigTable(stale), stale);
  assert.equal(withConfigTable(stale), doc);
});

test('every environment variable the configuration reads is declared in CONFIG_VARS', () => {
  const read = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get: (_t, key) => {
      if (typeof key === 'string') read.add(key);
      return undefined;
    },
  });
  loadConfig(env);
  const declared = new Set(CONFIG_VARS.map((v) => v.env));
  assert.ok(read.size > 40, `loadConfig read only ${read.size} variables`);
  assert.deepEqual([...read].filter((k) => !declared.has(k)).sort(), []);
  assert.deepEqual([...declared].filter((k) => !read.has(k)).sort(), [], 'declared but never read');
  assert.equal(declared.size, CONFIG_VARS.length, 'a variable is declared twice');
});

test('the table renders defaults and escapes cells', () => {
  const table = renderConfigTable([
    { env: 'A_VAR', default: '(unset)', doc: 'one | two' },
    { env: 'B_VAR', default: '10 (demo), 0 (production)', doc: 'b' },
    { env: 'C_VAR', default: '(= A_VAR)', doc: 'c' },
  ]);
  assert.equal(
    table,
    ['| Variable | Default | Meaning |', '|---|---|---|', '| `A_VAR` | unset | one \\| two |', '| `B_VAR` | `10` (demo), `0` (production) | b |', '| `C_VAR` | same as `A_VAR` | c |'].join('\n'),
  );
});
