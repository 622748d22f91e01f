/**
 * Reads what ByteWriter writes, with bounds checks: anything malformed throws an Error whose message starts
 * with `label` (which codec, which input), never reads past the end.
 */
export class ByteReader {
  pos = 0;
  protected readonly buf: Buffer;
  private readonly view: DataView;

  constructor(bytes: Uint8Array, protected readonly label: string) {
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  get length(): number {
    return this.buf.length;
  }

  fail(what: string): never {
    throw new Error(`${this.label} ${what}`);
  }

  byte(): number {
    if (this.pos >= this.buf.length) this.fail('truncated');
    return this.buf[this.pos++];
  }

  f64(): number {
    if (this.pos + 8 > this.buf.length) this.fail('truncated');
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  uint(): number {
    let v = 0;
    let mul = 1;
    for (;;) {
      const b = this.byte();
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
      if (mul > 2 ** 56) this.fail('varint too long');
    }
  }

  /** A string written by ByteWriter.string with these tags (its tag byte first). */
  string(asciiTag: number, utf16Tag: number): string {
    const tag = this.byte();
    if (tag !== asciiTag && tag !== utf16Tag) this.fail(`bad string tag ${tag}`);
    const n = this.uint();
    const start = this.pos;
    const end = start + (tag === asciiTag ? n : 2 * n);
    if (end > this.buf.length) this.fail('truncated');
    this.pos = end;
    if (n === 0) return '';
    return tag === asciiTag ? this.ascii(start, n) : this.buf.toString('utf16le', start, end);
  }

  /** n ASCII bytes from `start` as a string (a subclass may cache them). */
  protected ascii(start: number, n: number): string {
    return this.buf.toString('latin1', start, start + n);
  }
}
