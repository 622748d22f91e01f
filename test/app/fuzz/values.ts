/**
 * Values for the public-interface fuzz: a seeded PRNG (each request draws from its own seed, which fast-check
 * generates and prints on failure), schema-valid values built from the app's OpenAPI schemas, and hostile
 * values (numbers at and past every bound, broken decimals, prototype keys, control characters, huge strings).
 */
import { randomBytes } from 'node:crypto';
import { mulberry32 } from '../../../src/simulation/seeded-random.js';

/** Picks cases from a seeded mulberry32: the same seed gives the same request. */
export class Rng {
  /** Uniform in [0, 1). */
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  hex(bytes: number): string {
    let s = '';
    for (let i = 0; i < bytes * 2; i++) s += '0123456789abcdef'[this.int(16)];
    return s;
  }
}

/** Values that break number, decimal, string and object handling. */
export const HOSTILE: readonly unknown[] = [
  '1e400', '-1e400', 'NaN', 'Infinity', '-Infinity', '-0', '0x10', ' 1 ', '1e-9', '0.000000005', '0', '-1', '-0.00000001',
  '99999999999999999999999999999', '79228162514264337593543950335', '1e30', '', '.', '-', '1.', '.5', '+1', '1_000',
  1e308, -1e308, 5e-324, -0, 0, -1, 2 ** 53 + 1, 2 ** 64, 1.5, 0.1 + 0.2, 255, 256, 301, 65535,
  'BUY', 'SELL', 'yes', 'GTC', null, true, false, [], {}, [null], { '': 1 },
  '__proto__', 'constructor', 'prototype', 'toString', '\u0000', '\u202e', '😀'.repeat(3), 'a'.repeat(5000), '%00', '../../etc/passwd',
  '<script>', "' OR 1=1 --", '1970-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '275760-09-13T00:00:00Z', '-271821-04-20T00:00:00Z',
  '2025-02-30T00:00:00Z', '8640000000000001', '-8640000000000001', '00000:' + '0'.repeat(26), '99999:' + 'f'.repeat(26),
  '00000000-0000-4000-8000-000000000000', '0x' + '00'.repeat(20), '0x' + 'zz'.repeat(20), '0x' + '11'.repeat(65), '0x',
];

export function hostile(r: Rng): unknown {
  return r.chance(0.85) ? r.pick(HOSTILE) : r.pick([randomBytes(8).toString('base64'), r.int(2 ** 31) - 2 ** 30, r.next() * 1e12, r.hex(r.int(40))]);
}

/** Plain-text form of a hostile value for paths and query strings. */
export function hostileText(r: Rng): string {
  const v = hostile(r);
  return typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
}

type Schema = Record<string, any>;

export interface Known {
  /** Named values that must be real for a request to reach the handler (ids, instruments, wallets). */
  byName(name: string, r: Rng): unknown;
}

const DECIMAL_RE = '^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+)?$';
const UUID_RE = '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$';

/** A string matching one of the patterns the app's schemas use (unknown ones fail loudly: add them here). */
function fromPattern(pattern: string, r: Rng): string {
  switch (pattern) {
    case DECIMAL_RE:
    case '^[0-9]+(\\.[0-9]+)?$': return r.pick(['0.1', '1', '0.001', '100000', '3500', '0.5', '10']);
    case '^[0-9]{1,20}$': return '16182';
    case '^[A-Za-z0-9_.-]+$': return r.pick(['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'x']);
    case '^https://[^\\s]+$': return 'https://img.example.com/a.png';
    case '^[^\\u0000-\\u001f\\u007f]+$': return r.pick(['fuzz', 'Fuzz name', 'YYYY-MM-DD']);
    case '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$': return 'fuzz@example.com';
    case '^[0-9]{5}:[0-9A-Fa-f]{26}$': return orderIdToday(r);
    case '^[A-Z0-9_-]{2,32}$': return r.pick(['BTCUSDT', 'FUZZUSDT']);
    case UUID_RE: return uuid(r);
    case '^([0-9]{5}:[0-9A-Fa-f]{26}|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})$': return orderIdToday(r);
    case '^0x[0-9a-fA-F]{40}$': return `0x${r.hex(20)}`;
    case '^[a-z]{2}(-[A-Z]{2})?$': return r.pick(['en', 'de-DE']);
    case '^[a-z0-9_-]{1,32}$': return r.pick(['x', 'telegram']);
    default: throw new Error(`fuzz: no generator for the pattern ${pattern}`);
  }
}

export function uuid(r: Rng): string {
  const h = r.hex(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function orderIdToday(r: Rng, now = Date.now()): string {
  const day = Math.floor((now - Date.UTC(2025, 6, 24)) / 86_400_000);
  return `${String(day).padStart(5, '0')}:${r.hex(13)}`;
}

/** A value the schema accepts; `name` (the property or parameter) lets `known` supply real ids. */
export function valid(schema: Schema | undefined, name: string, r: Rng, known: Known): unknown {
  const k = known.byName(name, r);
  if (k !== undefined) return k;
  if (!schema) return 'x';
  if (schema.enum) return r.pick(schema.enum as unknown[]);
  if (schema.const !== undefined) return schema.const;
  if (schema.anyOf || schema.oneOf) return valid(r.pick((schema.anyOf ?? schema.oneOf) as Schema[]), name, r, known);
  const type = Array.isArray(schema.type) ? r.pick(schema.type.filter((t: string) => t !== 'null')) : schema.type;
  switch (type) {
    case 'string': {
      if (schema.pattern) return fromPattern(schema.pattern as string, r);
      if (schema.format === 'date-time') return new Date(Date.now() - r.int(86_400_000)).toISOString();
      const min = schema.minLength ?? 1;
      return 'fuzz'.padEnd(min, 'z').slice(0, schema.maxLength ?? 64);
    }
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 0);
      const max = Math.min(schema.maximum ?? min + 20, min + 1000);
      return min + r.int(Math.max(1, max - min + 1));
    }
    case 'boolean': return r.chance(0.5);
    case 'array': {
      const n = Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 1 + r.int(3)));
      return Array.from({ length: n }, () => valid(schema.items as Schema, name, r, known));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      const required = new Set<string>(schema.required ?? []);
      for (const [p, s] of Object.entries<Schema>(schema.properties ?? {})) {
        if (required.has(p) || r.chance(0.5)) out[p] = valid(s, p, r, known);
      }
      return out;
    }
    case 'null': return null;
    default: return 'x';
  }
}
