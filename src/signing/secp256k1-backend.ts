/**
 * Loads the native libsecp256k1 bindings of the `secp256k1` package explicitly.
 *
 * The package's own entry point silently falls back to a pure-JS (elliptic) build when the native
 * addon fails to load, which is far slower for recovery; we want to know which one runs, so the
 * bindings are required directly and the fallback is reported through `secp256k1Backend`.
 */
import { createRequire } from 'node:module';

type Secp256k1 = typeof import('secp256k1');

const require = createRequire(import.meta.url);

function load(): { lib: Secp256k1; backend: 'native' | 'elliptic' } {
  try {
    return { lib: require('secp256k1/bindings') as Secp256k1, backend: 'native' };
  } catch {
    return { lib: require('secp256k1/elliptic') as Secp256k1, backend: 'elliptic' };
  }
}

const loaded = load();

export const secp256k1: Secp256k1 = loaded.lib;
/** 'native' when the libsecp256k1 addon loaded; 'elliptic' means the slow JS fallback is in use. */
export const secp256k1Backend: 'native' | 'elliptic' = loaded.backend;
