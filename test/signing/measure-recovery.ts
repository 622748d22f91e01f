/**
 * Measurement, not a test: recoveries per second in-process and through the worker pool.
 * Run: node --import tsx test/signing/measure-recovery.ts [count]
 */
import { Wallet } from 'ethers';
import { createSignatureVerifier } from '../../src/signing/verifier.js';
import { eip712Domain, types, typedDataDigest } from '../../src/signing/eip712.js';
import { recoverSigner } from '../../src/signing/recover.js';
import { secp256k1Backend } from '../../src/signing/secp256k1-backend.js';
import type { SignedMessage } from '../../src/signing/ports.js';

const N = Number(process.argv[2] ?? 20000);
const chainId = '16182';
const wallet = Wallet.createRandom();

// A few distinct signed orders, reused round-robin (signing with ethers is the slow part).
const samples: Array<{ message: SignedMessage; signature: string }> = [];
for (let i = 0; i < 64; i++) {
  const message = {
    id: `00000:${i.toString(16).padStart(26, '0')}`,
    instrument: 'BTCUSD:DIX',
    side: i % 2 ? 'BUY' : 'SELL',
    leverage: 20n,
    quantity: BigInt(1000 + i) * 1000000n,
    limitPrice: 6500000000000n + BigInt(i),
    chainId: 16182n,
  };
  const signature = await wallet.signTypedData(eip712Domain(chainId), types['New limit order'], message);
  samples.push({ message, signature });
}

function rate(label: string, n: number, ms: number): void {
  console.log(`${label.padEnd(44)} ${Math.round((n / ms) * 1000).toLocaleString('en-US').padStart(10)} /s`);
}

console.log(`secp256k1 backend: ${secp256k1Backend}; ${N} signatures per run`);

let t = performance.now();
for (let i = 0; i < N; i++) typedDataDigest('New limit order', chainId, samples[i % 64].message);
rate('digest only (main thread)', N, performance.now() - t);

t = performance.now();
for (let i = 0; i < N; i++) {
  const s = samples[i % 64];
  recoverSigner(typedDataDigest('New limit order', chainId, s.message), s.signature);
}
rate('digest + recover, single thread', N, performance.now() - t);

for (const threads of [1, 2, 4]) {
  for (const digestOn of ['main', 'worker'] as const) {
    const v = createSignatureVerifier({ threads, digestOn });
    // warm-up: worker start-up (tsx compile) is not part of the rate
    await Promise.all(samples.map((s) => v.recover('New limit order', chainId, s.message, s.signature)));
    t = performance.now();
    const all: Array<Promise<string | null>> = [];
    for (let i = 0; i < N; i++) {
      const s = samples[i % 64];
      all.push(v.recover('New limit order', chainId, s.message, s.signature));
    }
    const out = await Promise.all(all);
    rate(`pool ${threads} thread(s), digest on ${digestOn}, 1 burst`, N, performance.now() - t);
    if (out.some((a) => a !== wallet.address.toLowerCase())) throw new Error('wrong address');

    // Trickle: bursts of 50 per event-loop turn, as from many concurrent HTTP requests.
    t = performance.now();
    const parts: Array<Promise<(string | null)[]>> = [];
    for (let i = 0; i < N; i += 50) {
      parts.push(
        Promise.all(
          Array.from({ length: 50 }, (_, k) => {
            const s = samples[(i + k) % 64];
            return v.recover('New limit order', chainId, s.message, s.signature);
          }),
        ),
      );
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(parts);
    rate(`pool ${threads} thread(s), digest on ${digestOn}, bursts of 50`, N, performance.now() - t);
    await v.close();
  }
}
