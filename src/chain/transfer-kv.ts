/** Reading and keying JetStream KV entries by transfer id: the payout ledger's and the shared simulated chain's. */
import type { KV, KvEntry } from '@nats-io/kv';

/** KV keys allow [-/_=.a-zA-Z0-9]: transfer ids are stored base64url-encoded. */
export const transferKey = (transferId: string): string => Buffer.from(transferId, 'utf8').toString('base64url');

/** The transfer's entry when it holds a value (not absent, deleted or purged). */
export async function transferEntry(kv: KV, transferId: string): Promise<KvEntry | undefined> {
  const e = await kv.get(transferKey(transferId));
  return e && e.operation === 'PUT' && e.length > 0 ? e : undefined;
}
