/**
 * Rooms a newcomer can read: a file in src/ over 400 lines says on its first line why it is kept whole
 * (`// Over 400 lines: …`), so a long file is a decision someone made, not an accident that grew.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const LIMIT = 400;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : name.endsWith('.ts') ? [p] : [];
  });
}

test(`every src file over ${LIMIT} lines gives its reason on the first line`, () => {
  const unexplained = sourceFiles('src').flatMap((file) => {
    const lines = readFileSync(file, 'utf8').split('\n');
    const count = lines.length - (lines.at(-1) === '' ? 1 : 0);
    return count > LIMIT && !/^\/\/ Over 400 lines: \S/.test(lines[0]) ? [`${file} (${count} lines)`] : [];
  });
  assert.deepEqual(unexplained, [], 'files over the limit without a reason');
});
