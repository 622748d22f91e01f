// Every relative link (with its #anchor) and every repository path named in README.md, CONTRIBUTING.md and
// docs/ resolves, so the documentation never points at a file that moved or is not in the repository.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brokenDocCitations, brokenReferences, documentationFiles, headingAnchors } from '../../scripts/docs/links.js';

test('the documentation names only links, anchors and paths that exist', () => {
  const files = documentationFiles(process.cwd());
  for (const f of ['README.md', 'CONTRIBUTING.md', 'docs/architecture.md', 'docs/security.md']) assert.ok(files.includes(f), f);
  const broken = brokenReferences(process.cwd(), files);
  assert.deepEqual(broken.map((b) => `${b.file}:${b.line}: ${b.target} (${b.reason})`), []);
});

test('the docs pages and headings cited in src/, bench/ and scripts/ exist', () => {
  assert.deepEqual(brokenDocCitations(process.cwd()).map((b) => `${b.file}:${b.line}: ${b.target} (${b.reason})`), []);
});

test('a missing file, a missing anchor and a missing path are reported', () => {
  const root = mkdtempSync(join(tmpdir(), 'perpx-docs-'));
  try {
    mkdirSync(join(root, 'docs'));
    mkdirSync(join(root, 'src/api'), { recursive: true });
    writeFileSync(join(root, 'src/api/server.ts'), '');
    writeFileSync(join(root, 'docs/a.md'), '# A page\n\n## The `order` path\n');
    writeFileSync(
      join(root, 'README.md'),
      [
        'ok: [a](docs/a.md#the-order-path), [top](#title), `src/api/server.ts`, src/api/*.ts, [web](https://example.com/x)',
        'bad: [b](docs/b.md), [a](docs/a.md#nowhere), `src/api/client.ts`, src/engine/',
        '# Title',
      ].join('\n'),
    );
    const broken = brokenReferences(root).map((b) => `${b.line} ${b.target}`);
    assert.deepEqual(broken, ['2 docs/b.md', '2 docs/a.md#nowhere', '2 src/api/client.ts', '2 src/engine']);
    writeFileSync(join(root, 'src/api/server.ts'), '// see docs/a.md, "The order path"; docs/a.md, "Nowhere"; docs/c.md\n');
    assert.deepEqual(brokenDocCitations(root).map((b) => `${b.file}:${b.line} ${b.target}`), [
      'src/api/server.ts:1 docs/a.md, "Nowhere"',
      'src/api/server.ts:1 docs/c.md',
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('heading anchors follow GitHub', () => {
  const a = headingAnchors('# Set up and run\n## Lifecycle: start-up and graceful stop\n```\n# not a heading\n```\n## FAQ\n## FAQ\n');
  assert.deepEqual([...a], ['set-up-and-run', 'lifecycle-start-up-and-graceful-stop', 'faq', 'faq-1']);
});
