/**
 * Engine factories for the journal tests: the fake one always, the real one once src/engine/engine.ts
 * exists (loaded through a computed specifier so this file type-checks before the engine lands).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EngineSnapshot, ExchangeEngine } from '../../src/engine/api.js';
import { createFakeEngine, restoreFakeEngine } from './fake-engine.js';

export interface EngineFactory {
  createEngine: () => ExchangeEngine;
  restoreEngine: (s: EngineSnapshot) => ExchangeEngine;
}

export type EngineKind = 'fake' | 'real';

const REAL_ENGINE_URL = new URL('../../src/engine/engine.ts', import.meta.url);

export function realEngineExists(): boolean {
  return existsSync(fileURLToPath(REAL_ENGINE_URL));
}

export async function loadEngineFactory(kind: EngineKind): Promise<EngineFactory> {
  if (kind === 'fake') return { createEngine: createFakeEngine, restoreEngine: restoreFakeEngine };
  const specifier: string = '../../src/engine/engine.js';
  const mod = (await import(specifier)) as Partial<EngineFactory>;
  if (typeof mod.createEngine !== 'function' || typeof mod.restoreEngine !== 'function') {
    throw new Error('src/engine/engine.ts does not export createEngine/restoreEngine yet');
  }
  return { createEngine: mod.createEngine, restoreEngine: mod.restoreEngine };
}
