/**
 * Finds what the documentation points at that is not there: relative markdown links (and their #anchors)
 * and repository paths written in the text (`src/…`, `test/…`, `bench/…`, `scripts/…`, `examples/…`,
 * `docs/…`, `bin/…`; `*` matches within one path segment); and the docs pages that code comments cite
 * (`docs/api.md, "Signing"`: the page and, when quoted, its heading). Run by test/docs/links.test.ts and
 * `npm run docs:links`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export interface BrokenReference {
  file: string;
  line: number;
  target: string;
  reason: string;
}

/** README.md, CONTRIBUTING.md and every markdown file under docs/. */
export function documentationFiles(root: string): string[] {
  const out = ['README.md', 'CONTRIBUTING.md'].filter((f) => existsSync(join(root, f)));
  const walk = (dir: string): void => {
    if (!existsSync(join(root, dir))) return;
    for (const name of readdirSync(join(root, dir)).sort()) {
      const rel = join(dir, name);
      if (statSync(join(root, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.md')) out.push(rel);
    }
  };
  walk('docs');
  return out;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .replace(/`/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

const LINK = /\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
const REPO_PATH = /(?<![\w/.@:-])((?:src|test|bench|scripts|examples|docs|bin)\/[\w.*/-]*[\w*])/g;

/** True when the path exists; `*` in a segment matches any run of characters within that segment. */
function pathExists(root: string, path: string): boolean {
  if (!path.includes('*')) return existsSync(join(root, path));
  let candidates = [root];
  for (const segment of path.split('/')) {
    const re = new RegExp(`^${segment.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    candidates = candidates.flatMap((dir) =>
      existsSync(dir) && statSync(dir).isDirectory() ? readdirSync(dir).filter((n) => re.test(n)).map((n) => join(dir, n)) : [],
    );
  }
  return candidates.length > 0;
}

export function brokenReferences(root: string, files: string[] = documentationFiles(root)): BrokenReference[] {
  const broken: BrokenReference[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (abs: string): Set<string> => {
    let a = anchorsOf.get(abs);
    if (!a) anchorsOf.set(abs, (a = headingAnchors(readFileSync(abs, 'utf8'))));
    return a;
  };
  for (const file of files) {
    const abs = resolve(root, file);
    const lines = readFileSync(abs, 'utf8').split('\n');
    lines.forEach((text, i) => {
      const at = (target: string, reason: string) => broken.push({ file, line: i + 1, target, reason });
      for (const [, target] of text.matchAll(LINK)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        const [pathPart, anchor] = target.split('#', 2);
        const targetAbs = pathPart === '' ? abs : resolve(dirname(abs), decodeURIComponent(pathPart));
        if (!existsSync(targetAbs)) {
          at(target, `no such file: ${relative(root, targetAbs)}`);
          continue;
        }
        if (anchor !== undefined && targetAbs.endsWith('.md') && !anchors(targetAbs).has(anchor)) {
          at(target, `no heading #${anchor} in ${relative(root, targetAbs)}`);
        }
      }
      for (const [, path] of text.replace(LINK, '[]').matchAll(REPO_PATH)) {
        if (!pathExists(root, path)) at(path, 'no such path in the repository');
      }
    });
  }
  return broken;
}

const DOC_CITATION = /(docs\/[\w./-]+\.md)(?:, "([^"]+)")?/g;

function headings(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/^#{1,6}\s+(.*?)\s*$/gm)].map((m) => m[1].replace(/`/g, '')));
}

function sourceFiles(root: string, dir: string): string[] {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs).sort().flatMap((name) => {
    const rel = join(dir, name);
    if (statSync(join(root, rel)).isDirectory()) return sourceFiles(root, rel);
    return /\.(ts|mjs|js)$/.test(name) ? [rel] : [];
  });
}

/** Docs pages (and quoted headings) cited in src/, bench/ and scripts/ that do not exist. */
export function brokenDocCitations(root: string, dirs: string[] = ['src', 'bench', 'scripts']): BrokenReference[] {
  const broken: BrokenReference[] = [];
  for (const file of dirs.flatMap((d) => sourceFiles(root, d))) {
    readFileSync(join(root, file), 'utf8').split('\n').forEach((text, i) => {
      for (const [, page, heading] of text.matchAll(DOC_CITATION)) {
        const abs = join(root, page);
        if (!existsSync(abs)) broken.push({ file, line: i + 1, target: page, reason: 'no such docs page' });
        else if (heading && !headings(readFileSync(abs, 'utf8')).has(heading)) {
          broken.push({ file, line: i + 1, target: `${page}, "${heading}"`, reason: `no heading "${heading}"` });
        }
      }
    });
  }
  return broken;
}
