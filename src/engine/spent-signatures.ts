/**
 * Signed instructions take effect at most once. The wire contract's Withdraw, replace and TpSl messages carry
 * no nonce or deadline, and the public client's signatures are deterministic, so the gateway passes the
 * EIP-712 digest it verified with the command and the engine spends it (SpentKeys) when the command succeeds:
 * an identical repeat is refused with SIGNATURE_ALREADY_USED. Kinds and lifetimes:
 * - withdraw: kept for good (at most one per withdrawal ever made);
 * - replace (limit and stop-limit, single and batch): until the order is no longer open; the message names
 *   the order, and an order id is never live again, so memory stays bounded by the open orders;
 * - tpsl (create and modify share one signed type and name no TpSl): kept for good, so a create's signature
 *   cannot also modify another TpSl.
 * A refused command spends nothing (the instruction had no effect; e.g. a withdrawal refused for balance may
 * be sent again after a deposit). Orders and position closes need none of this: their signed message holds
 * the client order id, which is refused once used.
 */
import type { CommandError } from './records.js';
import { FOREVER, SpentKeys } from './spent-keys.js';

export const SIGNED_KINDS = {
  withdraw: SpentKeys.kind('withdraw'),
  replace: SpentKeys.kind('replace'),
  tpsl: SpentKeys.kind('tpsl'),
} as const;
export type SignedKind = (typeof SIGNED_KINDS)[keyof typeof SIGNED_KINDS];

/** What the gateway sends: the digest as 0x + 64 lower-case hex digits. */
const DIGEST_RE = /^0x[0-9a-f]{64}$/;

const WHAT_TO_CHANGE: Record<SignedKind, string> = {
  withdraw: 'e.g. the amount by 0.00000001',
  replace: 'e.g. the quantity by one quantity increment',
  tpsl: 'e.g. the price by one price increment',
};

/**
 * Why the command must be refused before it runs, or null: a malformed digest, or one this user already spent
 * for this kind. `digest` undefined = the command carries none (system commands, journals older than this rule).
 */
export function signatureRefusal(spent: SpentKeys, userId: number, kind: SignedKind, digest: unknown): CommandError | null {
  if (digest === undefined) return null;
  if (typeof digest !== 'string' || !DIGEST_RE.test(digest)) {
    return { status: 400, code: 'INVALID_DIGEST', message: 'Invalid signature digest: expected 0x and 64 lower-case hex digits' };
  }
  if (!spent.has(userId, kind, digest)) return null;
  return {
    status: 409,
    code: 'SIGNATURE_ALREADY_USED',
    message: `This exact signed instruction was already used; change one signed field by one unit (${WHAT_TO_CHANGE[kind]}) and sign again`,
  };
}

/** The command succeeded: its digest (checked by signatureRefusal) is spent; `scope` ends its lifetime (none = for good). */
export function spendSignature(spent: SpentKeys, userId: number, kind: SignedKind, digest: string | undefined, scope: string = FOREVER): void {
  if (digest !== undefined) spent.add(userId, kind, digest, scope);
}
