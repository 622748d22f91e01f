// `npm start` runs this: rebuild web/dist only when a source file (the terminal's or the shared server
// modules it bundles) is newer than the last build, so a start after an unchanged checkout costs nothing.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const web = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(web, 'dist', 'index.html');
const sources = ['src', 'index.html', 'vite.config.ts', 'package.json', '../src/engine', '../src/domain', '../src/signing'];

function newest(path) {
  if (!existsSync(path)) return 0;
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((n) => newest(join(path, n))));
}

const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
if (built > 0 && sources.every((s) => newest(join(web, s)) <= built)) process.exit(0);
console.log('building the web terminal (web/dist)…');
const r = spawnSync('npx', ['vite', 'build', '--logLevel', 'warn'], { cwd: web, stdio: 'inherit' });
process.exit(r.status ?? 1);
