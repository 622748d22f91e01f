/** The account-event record (user-{id} channel). User, session and API-key records are REST-only: src/api/records/user.ts. */
import { Type, type Static } from '@sinclair/typebox';
import { IsoTime, iso } from './common.js';

/** user-{id} channel payload. */
export const AccountEventRecord = Type.Object({ user: Type.String(), marginCall: Type.Boolean(), updatedAt: IsoTime });
export type AccountEventRecord = Static<typeof AccountEventRecord>;

export function toAccountEvent(userId: number, marginCall: boolean, updatedAt: number): AccountEventRecord {
  return { user: String(userId), marginCall, updatedAt: iso(updatedAt) };
}
