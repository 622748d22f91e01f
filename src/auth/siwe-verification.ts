/**
 * Checks an EIP-4361 (SIWE) sign-in. Parsing uses the `siwe` package; the signature is checked
 * with our own EIP-191 digest + native recovery instead of `SiweMessage.verify`, which is async,
 * may call out to a provider (EIP-1271) and is slower. Every failure is an AuthError whose message
 * tells the client what was wrong.
 */
import { SiweMessage } from 'siwe';
import { personalMessageDigest, recoverSigner } from '../signing/recover.js';
import type { OriginAllowList } from './origin-allow-list.js';
import type { NonceStore } from './ports.js';
import { AuthError, type SignInBody } from './types.js';

/** How far in the future `Issued At` may be (client clock skew). */
export const MAX_ISSUED_AT_SKEW_MS = 5 * 60_000;

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

export interface SiweCheckContext {
  chainId: string;
  origins: OriginAllowList;
  nonces: NonceStore;
  now: () => number;
}

function parseTime(label: string, value: string): number {
  const t = Date.parse(value);
  if (!Number.isFinite(t)) throw new AuthError(400, 'invalid_message', `Invalid sign-in message: bad ${label}`);
  return t;
}

/**
 * Verifies everything, then consumes the nonce (so a malformed attempt does not burn a valid
 * nonce). The consume is atomic in the store, so of concurrent sign-ins with one nonce (on one
 * gateway or several) exactly one passes. Returns the signing wallet (lower case).
 */
export async function verifySiweSignIn(body: SignInBody, ctx: SiweCheckContext): Promise<string> {
  if (!body || typeof body !== 'object') throw new AuthError(400, 'invalid_body', 'Body must be {wallet, message, nonce, signature}');
  const { wallet, message, nonce, signature } = body;
  for (const [k, v] of Object.entries({ wallet, message, nonce, signature })) {
    if (typeof v !== 'string' || v.length === 0) throw new AuthError(400, 'invalid_body', `${k} is required`);
  }
  if (!ADDRESS_RE.test(wallet)) throw new AuthError(400, 'invalid_wallet', 'wallet must be a 0x-prefixed 20-byte address');

  let siwe: SiweMessage;
  try {
    siwe = new SiweMessage(message);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new AuthError(400, 'invalid_message', `Invalid sign-in message: ${detail}`);
  }

  if (!ctx.origins.allowsDomain(siwe.domain)) {
    throw new AuthError(401, 'domain_not_allowed', `Sign-in message domain ${JSON.stringify(siwe.domain)} is not accepted`);
  }
  if (siwe.scheme !== undefined && siwe.scheme !== 'https' && siwe.scheme !== 'http') {
    throw new AuthError(401, 'domain_not_allowed', `Sign-in message scheme ${JSON.stringify(siwe.scheme)} is not accepted`);
  }
  if (!ctx.origins.allowsUri(siwe.uri)) {
    throw new AuthError(401, 'domain_not_allowed', `Sign-in message URI ${JSON.stringify(siwe.uri)} is not accepted`);
  }
  if (siwe.version !== '1') throw new AuthError(400, 'invalid_message', 'Sign-in message version must be 1');
  if (siwe.address.toLowerCase() !== wallet.toLowerCase()) {
    throw new AuthError(401, 'wallet_mismatch', 'Sign-in message address does not match wallet');
  }
  if (siwe.nonce !== nonce) throw new AuthError(401, 'nonce_mismatch', 'Sign-in message nonce does not match nonce');
  if (!(await ctx.nonces.isValid(nonce))) {
    throw new AuthError(401, 'invalid_nonce', 'Nonce is unknown, expired or already used; request a new one');
  }
  if (String(siwe.chainId) !== ctx.chainId) {
    throw new AuthError(401, 'wrong_chain', `Sign-in message chain id ${siwe.chainId} is not ${ctx.chainId}`);
  }

  const now = ctx.now();
  if (!siwe.issuedAt) throw new AuthError(400, 'invalid_message', 'Sign-in message has no Issued At');
  if (parseTime('Issued At', siwe.issuedAt) > now + MAX_ISSUED_AT_SKEW_MS) {
    throw new AuthError(401, 'message_not_yet_valid', 'Sign-in message Issued At is in the future; check the device clock');
  }
  if (siwe.expirationTime && parseTime('Expiration Time', siwe.expirationTime) <= now) {
    throw new AuthError(401, 'message_expired', 'Sign-in message has expired');
  }
  if (siwe.notBefore && parseTime('Not Before', siwe.notBefore) > now) {
    throw new AuthError(401, 'message_not_yet_valid', 'Sign-in message is not valid yet (Not Before)');
  }

  const signer = recoverSigner(personalMessageDigest(message), signature);
  if (signer === null) throw new AuthError(401, 'invalid_signature', 'Signature is malformed');
  if (signer !== wallet.toLowerCase()) {
    throw new AuthError(401, 'invalid_signature', 'Signature was not made by wallet for this message');
  }

  if (!(await ctx.nonces.consume(nonce))) {
    throw new AuthError(401, 'invalid_nonce', 'Nonce is unknown, expired or already used; request a new one');
  }
  return signer;
}
