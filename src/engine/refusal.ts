/** Refusals and the input checks every stage shares. */
import { MAX_UNITS } from '../domain/fixed.js';
import type { OrderState } from './order.js';
import type { CommandError, Reply } from './records.js';

/** A reply while the command runs: its orders become views (the ones the events carry) when it ends. */
export type Draft = Reply<OrderState>;

export function fail(status: CommandError['status'], code: string, message: string): Draft {
  return { ok: false, error: { status, code, message } };
}

export function isPositiveUnits(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 && v <= MAX_UNITS;
}

export function validUser(userId: number): boolean {
  return Number.isSafeInteger(userId) && userId > 0;
}

/** Deterministic UUID-shaped id: `kind` (8 hex) + counter. */
export function sequenceUuid(kind: string, n: number): string {
  const hex = n.toString(16).padStart(12, '0');
  return `${kind}-0000-4000-8000-${hex}`;
}
