/**
 * keccak-256 on the native Keccak state of the `keccak` package (prebuilt N-API addon), with
 * @noble/hashes as the fallback when the addon does not load.
 *
 * Every signature check hashes several Keccak blocks (struct, digest, signer address, string fields), and
 * the JS permutation is several times slower than the native one (docs/performance.md). The package's
 * public API wraps each hash in a stream object, so the state class is used directly (rate 1088 bits,
 * capacity 512, Keccak padding 0x01, 32-byte output = keccak-256). Tests pin the output to @noble/hashes.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { keccak_256 } from '@noble/hashes/sha3';

interface NativeKeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Buffer;
}

const require = createRequire(import.meta.url);

function loadNative(): (new () => NativeKeccakState) | undefined {
  try {
    const dir = dirname(require.resolve('keccak/package.json'));
    const State = (require('node-gyp-build') as (dir: string) => unknown)(dir);
    return typeof State === 'function' ? (State as new () => NativeKeccakState) : undefined;
  } catch {
    return undefined;
  }
}

const NativeState = loadNative();

/** 'native' when the addon loaded; 'js' means @noble/hashes computes every hash. */
export const keccakBackend: 'native' | 'js' = NativeState ? 'native' : 'js';

function nativeKeccak256(data: Uint8Array): Uint8Array {
  const s = new NativeState!();
  s.initialize(1088, 512);
  s.absorb(Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  s.absorbLastFewBits(0x01);
  return s.squeeze(32);
}

/** keccak-256 (Ethereum's, not FIPS SHA3-256) of `data`. */
export const keccak256: (data: Uint8Array) => Uint8Array = NativeState ? nativeKeccak256 : keccak_256;
