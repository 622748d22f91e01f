/**
 * The browser's signed bodies (web/src/lib/signing.ts: ethers over the shared schema module) against the
 * server's own digest (src/signing/eip712.ts, hand-written ABI encoding): for every operation the terminal
 * signs, the server recovers the signing wallet from the body as sent.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hexlify, TypedDataEncoder, Wallet } from 'ethers';
import { eip712Domain, SIGNED_TYPES, types } from '../../src/signing/eip712-schema.js';
import { normalizeAmount, typedDataDigest } from '../../src/signing/eip712.js';
import { recoverSigner } from '../../src/signing/recover.js';
import type { SignedMessage, SignedType } from '../../src/signing/ports.js';
import {
  closeBody, limitBody, marketBody, replaceBody, stopLimitBody, tpslBody, withdrawBody, type TypedDataSigner,
} from '../../web/src/lib/signing.js';

const CHAIN = '16182';

describe('browser and server compute the same EIP-712 digest', () => {
  const wallet = Wallet.createRandom();
  const signed: Array<{ type: SignedType; value: Record<string, unknown>; signature: string }> = [];
  // Records what the browser code asks the wallet to sign, then signs it as a wallet would.
  const signer: TypedDataSigner = {
    address: wallet.address,
    signMessage: (m) => wallet.signMessage(m),
    async signTypedData(domain, t, value) {
      const type = Object.keys(t)[0] as SignedType;
      const signature = await wallet.signTypedData(domain, t, value);
      signed.push({ type, value, signature });
      assert.equal(TypedDataEncoder.hash(domain, t, value), TypedDataEncoder.hash(eip712Domain(CHAIN), types[type], value));
      return signature;
    },
  };

  it('for every body the terminal signs', async () => {
    const bodies = [
      await limitBody(signer, CHAIN, { instrument: 'BTCUSDT', side: 'BUY', leverage: 25, quantity: '0.0123', limitPrice: '99999.95', timeInForce: 'GTC', postOnly: true }),
      await marketBody(signer, CHAIN, { instrument: 'ETHUSDT', side: 'SELL', leverage: 3, cashQuantity: '1234.56789', timeInForce: 'IOC' }),
      await stopLimitBody(signer, CHAIN, { instrument: 'BTCUSDT', side: 'SELL', leverage: 1, quantity: '2', limitPrice: '90000.1', stopPrice: '90500' }),
      await closeBody(signer, CHAIN, { instrument: 'BTCUSDT', leverage: 10, quantity: '0.5' }),
      await replaceBody(signer, CHAIN, { orderId: '00100:0123456789abcdef0123456789', quantity: '0.2', limitPrice: '101000' }),
      await tpslBody(signer, CHAIN, 'BTCUSDT', { type: 'take-profit', side: 'SELL', quantity: '0', price: '120000.5' }),
      await withdrawBody(signer, CHAIN, wallet.address, '100.123456789'),
    ];
    assert.equal(signed.length, bodies.length);
    for (const [k, s] of signed.entries()) {
      const body = bodies[k] as Record<string, unknown>;
      // The server's message: uint fields as integers, the body's decimal amounts normalized to exactly those.
      const message: SignedMessage = {};
      for (const f of SIGNED_TYPES[s.type]) {
        const v = s.value[f.name];
        message[f.name] = f.type.startsWith('uint') ? BigInt(v as string | number) : String(v);
        const sent = body[f.name];
        if (f.type === 'uint96' || f.type === 'uint80') assert.equal(normalizeAmount(sent as string), message[f.name], `${s.type}.${f.name}`);
      }
      const digest = typedDataDigest(s.type, CHAIN, message);
      assert.equal(hexlify(digest), TypedDataEncoder.hash(eip712Domain(CHAIN), types[s.type], s.value), s.type);
      assert.equal(recoverSigner(digest, s.signature), wallet.address.toLowerCase(), s.type);
    }
  });
});
