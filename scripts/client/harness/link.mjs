// Makes the sibling client folders importable as @evedex/* packages built against each other: each gets a
// package folder in node_modules whose `src` is a symlink to the sibling's read-only sources (entry src/index.ts,
// run by tsx). Run node with --preserve-symlinks so their bare imports (ethers, axios, …) resolve here.
import { mkdirSync, rmSync, symlinkSync, writeFileSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

for (const name of ['exchange-crypto', 'exchange-api', 'exchange-bot-sdk']) {
  const sibling = resolve('..', name);
  const pkg = JSON.parse(readFileSync(join(sibling, 'package.json'), 'utf8'));
  const dir = join('node_modules', '@evedex', name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: pkg.name, version: pkg.version, main: 'src/index.ts', types: 'src/index.ts' }, null, 2));
  symlinkSync(join(sibling, 'src'), join(dir, 'src'));
  console.log(`${pkg.name}@${pkg.version} -> ${sibling}/src`);
}
