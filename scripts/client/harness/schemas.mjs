// JSON schemas of the response types the client's gateways declare (routes.mjs), generated from the client's
// own TypeScript with typescript-json-schema, written to <out>/<Type>.json (`Trade[]` → Trade.array.json).
// Extra fields are allowed (the client ignores them); every field the type requires must be there.
// The sources are read through node_modules/@evedex (link.mjs) so their @evedex imports resolve to the siblings.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as TJS from 'typescript-json-schema';
import { clientRoutes } from './routes.mjs';

const out = process.argv[2] ?? 'schemas';
const files = ['utils/types.ts', 'authRestGateway.ts', 'exchangeRestGateway.ts'].map((f) => `node_modules/@evedex/exchange-api/src/${f}`);
const program = TJS.getProgramFromFiles(files, { strictNullChecks: true, esModuleInterop: true, skipLibCheck: true, preserveSymlinks: true, moduleResolution: 2 }, '.');
const generator = TJS.buildGenerator(program, { required: true, noExtraProps: false, ignoreErrors: false, uniqueNames: true });

export function schemaFile(type) {
  return type === '{}' ? 'Empty.json' : `${type.replace(/\[\]$/, '.array')}.json`;
}

/** The client's own declaration of a type name (auth types in authRestGateway.ts, the rest in utils/types.ts). */
function symbolOf(name, file) {
  const all = generator.getSymbols(name).filter((s) => s.fullyQualifiedName.includes('@evedex/exchange-api/src/'));
  const mine = all.find((s) => s.fullyQualifiedName.includes(file)) ?? all[0];
  if (!mine) throw new Error(`type ${name} not declared by the client`);
  return mine.name;
}

function schemaOf(type, cls) {
  // TypeScript's `{}` is any value but null and undefined (an array too): the client reads nothing of it.
  if (type === '{}') return { $schema: 'http://json-schema.org/draft-07/schema#', not: { type: 'null' } };
  const base = type.replace(/\[\]$/, '');
  const s = generator.getSchemaForSymbol(symbolOf(base, cls === 'AuthRestGateway' ? 'authRestGateway' : 'utils/types'));
  if (!type.endsWith('[]')) return s;
  const { definitions, $schema, ...item } = s;
  return { $schema, type: 'array', items: item, definitions };
}

mkdirSync(out, { recursive: true });
const types = new Map(clientRoutes().filter((r) => r.type).map((r) => [r.type, r.method.split('.')[0]]));
for (const [t, cls] of types) {
  writeFileSync(join(out, schemaFile(t)), `${JSON.stringify(schemaOf(t, cls), null, 2)}\n`);
  console.log(t, '->', schemaFile(t));
}
