/**
 * Rendered depth responses, reused while the engine has applied no command since they were built.
 *
 * Building a depth view and formatting its numbers costs several times a trivial route; readers poll the
 * same few (instrument, maxLevel, roundPrice) combinations far more often than the book changes. The
 * engine's seq is the version: any command may touch the book, and keying on it can never serve a book
 * older than what a fresh read would build.
 */
const MAX_ENTRIES = 512;

export class RenderedDepthCache {
  private seq = -1;
  // Bytes rather than text: a repeat then costs no UTF-8 encoding or length scan on the way out.
  private readonly bodies = new Map<string, Buffer>();

  get(seq: number, key: string): Buffer | undefined {
    return seq === this.seq ? this.bodies.get(key) : undefined;
  }

  set(seq: number, key: string, body: Buffer): void {
    if (seq !== this.seq || this.bodies.size >= MAX_ENTRIES) {
      this.bodies.clear();
      this.seq = seq;
    }
    this.bodies.set(key, body);
  }
}
