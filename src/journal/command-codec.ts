/**
 * Binary journal body (format 1): the same JSON value a command's JSON text would hold, in a compact form
 * written without JSON.stringify. The hot kinds (order.*, price.tick) are journaled this way; a row's body
 * is then a BLOB whose first byte is the format (1), while every other kind — and any command the encoder
 * declines — stays JSON TEXT as before. Readers tell them apart by the SQLite type of `body` (string = JSON,
 * Buffer = binary), so journals written before this format replay unchanged.
 *
 * Value = tag byte, then:
 *   0 null · 1 false · 2 true
 *   3 non-negative safe integer, LEB128 · 4 negative safe integer, LEB128 of its magnitude
 *   5 float64 (little endian)
 *   6 string of ASCII chars: LEB128 length, bytes · 7 any other string: LEB128 length in UTF-16 code units,
 *     then the code units little endian (lone surrogates survive, as they do through JSON)
 *   8 string from VALUES: one byte index
 *   9 array: LEB128 count, values
 *   10 object: entries, each a key byte (index into KEYS; 0xFE = a string value follows holding the key)
 *      then the value; 0xFF ends the object.
 * JSON semantics are kept exactly: keys in Object.keys order, undefined / functions skipped in objects and
 * null in arrays, non-finite numbers null, -0 as 0. Anything JSON.stringify would treat specially (toJSON,
 * a non-plain object, a bigint, a cycle) makes the encoder decline, and the caller writes JSON text instead
 * (which throws for a bigint, as before). KEYS and VALUES are part of the format: append only.
 */

export const BINARY_FORMAT = 1;

const KEYS = [
  'kind', 'ts', 'userId', 'order', 'id', 'instrument', 'side', 'type', 'timeInForce', 'leverage',
  'quantity', 'limitPrice', 'stopPrice', 'cashQuantity', 'postOnly', 'smp', 'smpId', 'group', 'reduceOnly', 'tpsl',
  'price', 'orderId', 'orderIds', 'orders', 'items', 'replace', 'indexPrice', 'markPrice', 'intervalMs', 'amount',
  'transferId', 'recipient', 'success', 'hold', 'trading', 'state', 'config',
] as const;

const VALUES = [
  'order.place', 'order.cancel', 'order.replace', 'order.placeBatch', 'order.replaceBatch', 'order.cancelAll',
  'order.cancelMany', 'price.tick', 'position.close', 'position.leverage',
  'BUY', 'SELL', 'LIMIT', 'MARKET', 'STOP', 'STOP_LIMIT', 'GTC', 'DAY', 'IOC', 'FOK',
  'manually', 'tpsl', 'take-profit', 'stop-loss', 'liquidation', 'adl', 'otc', 'otc-hidden',
] as const;

const KEY_INDEX = new Map<string, number>(KEYS.map((k, i) => [k, i]));
const VALUE_INDEX = new Map<string, number>(VALUES.map((v, i) => [v, i]));
/** Keys whose string values are looked up in VALUES (ids and other free text are not worth the lookup). */
const ENUM_KEYS = new Set(['kind', 'side', 'type', 'timeInForce', 'group']);
const IS_ENUM_KEY = KEYS.map((k) => ENUM_KEYS.has(k));
/** Entries of the per-position key cache (see CommandEncoder.object). */
const HINTS = 64;

const T_NULL = 0;
const T_FALSE = 1;
const T_TRUE = 2;
const T_UINT = 3;
const T_NINT = 4;
const T_F64 = 5;
const T_ASCII = 6;
const T_UTF16 = 7;
const T_DICT = 8;
const T_ARRAY = 9;
const T_OBJECT = 10;
const K_INLINE = 0xfe;
const K_END = 0xff;
/** Nesting deeper than this is declined (JSON text handles it, and a cycle ends here). */
const MAX_DEPTH = 32;

/** Thrown inside the encoder to decline a value; never escapes `encode`. */
const DECLINE = new Error('decline');

/** Kinds journaled in the binary format; the rest are rare and stay readable JSON text in the journal. */
export function isBinaryKind(kind: string): boolean {
  return kind.startsWith('order.') || kind === 'price.tick';
}

/**
 * Appends encoded commands to one growing buffer. `encode` returns false (having written nothing) when
 * the value must be journaled as JSON text instead.
 */
export class CommandEncoder {
  buf: Uint8Array;
  pos = 0;
  private f64 = new Float64Array(1);
  private f64Bytes = new Uint8Array(this.f64.buffer);
  /**
   * Commands of one kind have the same keys in the same order, so the n-th key of a command is usually the
   * n-th key of the previous one of its kind: remembered per position, it costs a pointer comparison
   * instead of a map lookup; likewise an enum value (BUY, LIMIT…) at that position.
   */
  private keyPos = 0;
  private readonly hintKey: Array<string | undefined> = new Array<string | undefined>(HINTS).fill(undefined);
  private readonly hintKeyIdx = new Int32Array(HINTS);
  private readonly hintVal: Array<string | undefined> = new Array<string | undefined>(HINTS).fill(undefined);
  private readonly hintValIdx = new Int32Array(HINTS);

  constructor(capacity = 1 << 16) {
    this.buf = new Uint8Array(capacity);
  }

  /** Hands the written bytes over (the buffer may be transferred) and goes on in `next` (or a new buffer). */
  take(next?: Uint8Array): Uint8Array {
    const out = this.buf.subarray(0, this.pos);
    this.buf = next ?? new Uint8Array(Math.max(1 << 12, this.buf.length));
    this.pos = 0;
    return out;
  }

  encode(value: object): boolean {
    const start = this.pos;
    try {
      this.ensure(1);
      this.buf[this.pos++] = BINARY_FORMAT;
      this.keyPos = 0;
      this.value(value, 0);
      return true;
    } catch (err) {
      this.pos = start;
      if (err === DECLINE || err instanceof RangeError) return false;
      throw err;
    }
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.pos + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  private value(v: unknown, depth: number): void {
    switch (typeof v) {
      case 'string':
        this.string(v);
        return;
      case 'number':
        this.number(v);
        return;
      case 'boolean':
        this.ensure(1);
        this.buf[this.pos++] = v ? T_TRUE : T_FALSE;
        return;
      case 'object':
        if (v === null) {
          this.ensure(1);
          this.buf[this.pos++] = T_NULL;
          return;
        }
        if (depth >= MAX_DEPTH) throw DECLINE;
        if (Array.isArray(v)) this.array(v, depth + 1);
        else this.object(v as Record<string, unknown>, depth + 1);
        return;
      default:
        // undefined / function / symbol at the top or in an array, bigint: JSON text decides.
        throw DECLINE;
    }
  }

  private object(o: Record<string, unknown>, depth: number): void {
    const proto: unknown = Object.getPrototypeOf(o);
    if ((proto !== Object.prototype && proto !== null) || o.toJSON !== undefined) throw DECLINE;
    this.ensure(1);
    this.buf[this.pos++] = T_OBJECT;
    for (const key in o) {
      const v = o[key];
      const t = typeof v;
      if (t === 'undefined' || t === 'function' || t === 'symbol') continue;
      const p = this.keyPos++ & (HINTS - 1);
      let k: number;
      if (key === this.hintKey[p]) {
        k = this.hintKeyIdx[p];
      } else {
        k = KEY_INDEX.get(key) ?? -1;
        this.hintKey[p] = key;
        this.hintKeyIdx[p] = k;
      }
      this.ensure(1);
      if (k >= 0) {
        this.buf[this.pos++] = k;
        if (t === 'string' && IS_ENUM_KEY[k]) {
          this.enumString(v as string, p);
          continue;
        }
      } else {
        this.buf[this.pos++] = K_INLINE;
        this.string(key);
      }
      this.value(v, depth);
    }
    this.ensure(1);
    this.buf[this.pos++] = K_END;
  }

  private array(a: unknown[], depth: number): void {
    if ((a as { toJSON?: unknown }).toJSON !== undefined || Object.getPrototypeOf(a) !== Array.prototype) throw DECLINE;
    const n = a.length;
    this.ensure(1);
    this.buf[this.pos++] = T_ARRAY;
    this.uint(n);
    for (let i = 0; i < n; i++) {
      const v = a[i];
      const t = typeof v;
      if (t === 'undefined' || t === 'function' || t === 'symbol') {
        this.ensure(1);
        this.buf[this.pos++] = T_NULL;
      } else {
        this.value(v, depth);
      }
    }
  }

  private number(v: number): void {
    if (v >= 0 && v <= 0x7fffffff && (v | 0) === v) {
      // Covers -0 too (JSON writes it as 0).
      this.ensure(6);
      this.buf[this.pos++] = T_UINT;
      this.uint(v);
    } else if (Number.isSafeInteger(v)) {
      this.ensure(9);
      if (v > 0) {
        this.buf[this.pos++] = T_UINT;
        this.uint(v);
      } else {
        this.buf[this.pos++] = T_NINT;
        this.uint(-v);
      }
    } else if (Number.isFinite(v)) {
      this.ensure(9);
      this.buf[this.pos++] = T_F64;
      this.f64[0] = v;
      this.buf.set(this.f64Bytes, this.pos);
      this.pos += 8;
    } else {
      this.ensure(1);
      this.buf[this.pos++] = T_NULL;
    }
  }

  /** LEB128 of a non-negative safe integer; the caller has ensured room for it (≤ 8 bytes). */
  private uint(v: number): void {
    this.ensure(8);
    const buf = this.buf;
    let pos = this.pos;
    if (v > 0x7fffffff) {
      // Above 31 bits: 28 low bits (four groups) by integer ops on the low word, then the rest, which is
      // below 2^25 for a safe integer (float division and modulo per group cost ~3x as much).
      let lo = v >>> 0;
      const hi = (v - lo) / 0x10000000; // exact: v − lo is a multiple of 2^32, so of 2^28
      for (let k = 0; k < 4; k++) {
        buf[pos++] = (lo & 0x7f) | 0x80;
        lo >>>= 7;
      }
      v = hi + lo; // lo now holds bits 28..31 of the low word, below 16; hi is a multiple of 16
    }
    while (v > 0x7f) {
      buf[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[pos++] = v;
    this.pos = pos;
  }

  /** A string that is usually one of VALUES; `p`: its key's position (for the cache). */
  private enumString(s: string, p: number): void {
    let d: number;
    if (s === this.hintVal[p]) {
      d = this.hintValIdx[p];
    } else {
      d = VALUE_INDEX.get(s) ?? -1;
      this.hintVal[p] = s;
      this.hintValIdx[p] = d;
    }
    if (d < 0) {
      this.string(s);
      return;
    }
    this.ensure(2);
    this.buf[this.pos++] = T_DICT;
    this.buf[this.pos++] = d;
  }

  private string(s: string): void {
    const n = s.length;
    this.ensure(9 + 2 * n);
    const start = this.pos;
    this.buf[this.pos++] = T_ASCII;
    this.uint(n);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.pos = start;
        this.utf16(s);
        return;
      }
      buf[pos++] = c;
    }
    this.pos = pos;
  }

  private utf16(s: string): void {
    const n = s.length;
    this.buf[this.pos++] = T_UTF16;
    this.uint(n);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      buf[pos++] = c & 0xff;
      buf[pos++] = c >>> 8;
    }
    this.pos = pos;
  }
}

/** Reads a body written by CommandEncoder (format byte included). Throws on anything malformed. */
export function decodeCommand(body: Uint8Array): unknown {
  if (body.length === 0 || body[0] !== BINARY_FORMAT) {
    throw new Error(`unknown journal body format ${body.length === 0 ? '(empty)' : body[0]}`);
  }
  const d = new Decoder(Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.length));
  d.pos = 1;
  const v = d.value();
  if (d.pos !== body.length) throw new Error(`journal body has ${body.length - d.pos} trailing bytes`);
  return v;
}

class Decoder {
  pos = 0;
  private readonly f64 = new Float64Array(1);
  private readonly f64Bytes = new Uint8Array(this.f64.buffer);

  constructor(private readonly buf: Buffer) {}

  private byte(): number {
    if (this.pos >= this.buf.length) throw new Error('journal body truncated');
    return this.buf[this.pos++];
  }

  private uint(): number {
    let v = 0;
    let mul = 1;
    for (;;) {
      const b = this.byte();
      v += (b & 0x7f) * mul;
      if (b < 0x80) break;
      mul *= 128;
      if (mul > 2 ** 56) throw new Error('journal body: varint too long');
    }
    return v;
  }

  value(): unknown {
    const tag = this.byte();
    switch (tag) {
      case T_NULL: return null;
      case T_FALSE: return false;
      case T_TRUE: return true;
      case T_UINT: return this.uint();
      case T_NINT: return -this.uint();
      case T_F64: {
        if (this.pos + 8 > this.buf.length) throw new Error('journal body truncated');
        for (let i = 0; i < 8; i++) this.f64Bytes[i] = this.buf[this.pos++];
        return this.f64[0];
      }
      case T_ASCII:
      case T_UTF16:
      case T_DICT:
        this.pos--;
        return this.string();
      case T_ARRAY: {
        const n = this.uint();
        if (n > this.buf.length) throw new Error('journal body: bad array length');
        const a = new Array<unknown>(n);
        for (let i = 0; i < n; i++) a[i] = this.value();
        return a;
      }
      case T_OBJECT: {
        const o: Record<string, unknown> = {};
        for (;;) {
          const k = this.byte();
          if (k === K_END) return o;
          let key: string;
          if (k === K_INLINE) key = this.string();
          else if (k < KEYS.length) key = KEYS[k];
          else throw new Error(`journal body: bad key ${k}`);
          const v = this.value();
          if (key === '__proto__') Object.defineProperty(o, key, { value: v, enumerable: true, writable: true, configurable: true });
          else o[key] = v;
        }
      }
      default:
        throw new Error(`journal body: bad tag ${tag}`);
    }
  }

  private string(): string {
    const tag = this.byte();
    if (tag === T_DICT) {
      const i = this.byte();
      if (i >= VALUES.length) throw new Error(`journal body: bad dictionary string ${i}`);
      return VALUES[i];
    }
    if (tag !== T_ASCII && tag !== T_UTF16) throw new Error(`journal body: bad string tag ${tag}`);
    const n = this.uint();
    const end = this.pos + (tag === T_ASCII ? n : 2 * n);
    if (end > this.buf.length) throw new Error('journal body truncated');
    const s = n === 0 ? '' : tag === T_ASCII ? this.buf.toString('latin1', this.pos, end) : this.buf.toString('utf16le', this.pos, end);
    this.pos = end;
    return s;
  }
}
