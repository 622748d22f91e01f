/**
 * Building blocks shared by every wire record: schema helpers and value converters.
 * Records are defined once here (TypeBox → JSON Schema) so REST responses, the OpenAPI document and
 * real-time payloads cannot drift apart.
 */
import { Kind, Type, TypeRegistry, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { toWireNumber, type Money, type Units } from '../domain/fixed.js';

/**
 * String enum as a plain `{type:'string', enum:[…]}` schema: reads better in OpenAPI than an anyOf of
 * literals and serializes faster. Registered as a TypeBox kind so the TypeBox compiler can check it.
 */
if (!TypeRegistry.Has('StringEnum')) {
  TypeRegistry.Set<{ enum: string[] }>('StringEnum', (schema, value) => typeof value === 'string' && schema.enum.includes(value));
}
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ [Kind]: 'StringEnum', type: 'string', enum: [...values], ...options });
}

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** ISO 8601 timestamp, as the spec's REST records carry. */
export const IsoTime = Type.String({ description: 'ISO 8601 timestamp' });
// Records carry the same few timestamps over and over (an order's createdAt = updatedAt, every order
// created in the same millisecond, its reply and its real-time event): one remembered formatting saves
// a Date and a toISOString per repeat on the order path. Other milliseconds of the same second reuse the
// second's formatted prefix, since the reply and the real-time event of consecutive commands alternate
// between two timestamps (toISOString's cost: docs/performance.md, Engine).
let lastIsoMs = NaN;
let lastIso = '';
let prefixSecond = NaN;
/** "YYYY-MM-DDTHH:mm:ss." of `prefixSecond`. */
let prefix = '';
/** 10000-01-01T00:00:00Z: from there on toISOString writes a signed 6-digit year. */
const YEAR_10000_MS = 253402300800000;
export function iso(ms: number): string {
  if (ms === lastIsoMs) return lastIso;
  if (Number.isSafeInteger(ms) && ms >= 0 && ms < YEAR_10000_MS) {
    const second = Math.floor(ms / 1000);
    if (second !== prefixSecond) {
      prefix = new Date(second * 1000).toISOString().slice(0, 20);
      prefixSecond = second;
    }
    const milli = ms - second * 1000;
    lastIso = `${prefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
  } else {
    lastIso = new Date(ms).toISOString();
  }
  lastIsoMs = ms;
  return lastIso;
}
export function isoOrNull(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : iso(ms);
}

/** Engine fixed-point value → JSON number (the only place amounts become binary floats). */
export function num(v: Units | Money): number {
  return toWireNumber(v);
}
export function numOrNull(v: Units | Money | null | undefined): number | null {
  return v === null || v === undefined ? null : toWireNumber(v);
}

export const ErrorBody = Type.Object(
  { error: Type.Object({ code: Type.String(), message: Type.String() }) },
  { description: 'Every error: { error: { code, message } }' },
);
export type ErrorBody = Static<typeof ErrorBody>;

/**
 * The 409 of a route whose signed instruction takes effect at most once (withdraw, replace, TpSl), for the
 * OpenAPI document; `others` names the route's other 409 codes.
 */
export function SignatureUsedConflict(others: string) {
  return Type.Object(ErrorBody.properties, {
    description: 'SIGNATURE_ALREADY_USED: this exact signed instruction was already used. The signed message has no nonce and '
      + 'wallet signatures are deterministic, so an identical repeat (same fields, same signature) is refused rather than '
      + `applied twice; change one signed field by one unit (e.g. an amount by 0.00000001) and sign again. ${others}`,
  });
}

/** EmptyResponse of the spec: `{}`. */
export const EmptyResponse = Type.Object({}, { description: 'EmptyResponse' });

/** Paged list envelope used by GET /api/order, /api/fill, /api/tpsl. */
export function Paged<T extends TSchema>(item: T) {
  return Type.Object({ list: Type.Array(item), count: Type.Integer(), next: Type.Optional(Type.String()) });
}
export interface PagedRecord<T> {
  list: T[];
  count: number;
  next?: string;
}

export const COIN = 'usdt';
