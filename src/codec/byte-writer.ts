/**
 * Growable byte buffer with the primitives the binary codecs share (the journal's command bodies,
 * src/journal/command-codec.ts, and the projector's event batches, src/store/projector-codec.ts): a byte,
 * a LEB128 unsigned integer, a float64, and a string as ASCII bytes or, when it has any other code unit,
 * as UTF-16 code units (lone surrogates survive). Each codec picks its own tag values.
 *
 * Hand-written: these run for every journaled command and every projected event, where a general
 * serializer (JSON.stringify, V8's structured clone) cost several times as much.
 */
export class ByteWriter {
  /** Written bytes are buf[0, pos). Replace it only through `take` (the DataView follows it). */
  buf: Uint8Array;
  pos = 0;
  /**
   * Over `buf`, replaced with it. Floats go through DataView rather than 8 bytes copied from a Float64Array:
   * faster to read back (docs/performance.md, "Read model").
   */
  private view: DataView;

  constructor(capacity = 1 << 16) {
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  /** Hands the written bytes over (the buffer may be transferred) and goes on in `next` (or a new buffer). */
  take(next?: Uint8Array): Uint8Array {
    const out = this.buf.subarray(0, this.pos);
    this.buf = next ?? new Uint8Array(Math.max(1 << 12, this.buf.length));
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    this.pos = 0;
    return out;
  }

  /** Room for n more bytes (the buffer doubles as needed; what is written is kept). */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.pos + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** Little-endian float64. */
  f64(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  /** LEB128 of a non-negative safe integer (at most 8 bytes). */
  uint(v: number): void {
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

  /** `asciiTag`, LEB128 length, one byte per char; or, with any char ≥ 0x80, `utf16Tag`, length, code units LE. */
  string(s: string, asciiTag: number, utf16Tag: number): void {
    const n = s.length;
    this.ensure(9 + 2 * n);
    const start = this.pos;
    this.buf[this.pos++] = asciiTag;
    this.uint(n);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.pos = start;
        this.utf16(s, utf16Tag);
        return;
      }
      buf[pos++] = c;
    }
    this.pos = pos;
  }

  private utf16(s: string, tag: number): void {
    const n = s.length;
    this.buf[this.pos++] = tag;
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
