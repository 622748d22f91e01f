// Builds the websocket frame (RFC 6455 header + newline-joined messages) for a connection's
// queued messages. Subscribers of one channel usually hold the very same queued buffers (one
// encoded publication shared by all), so the last few results are kept and reused: one join and
// one frame per distinct queue instead of one per connection, and each connection's socket gets
// a single ready buffer: cheaper than ws.send, which allocates a header and writes header + payload per
// call (docs/performance.md, "Real-time fan-out").

/** Distinct queues remembered; subscribers of a channel are written one after another. */
const CACHED = 4;

const NEWLINE = 10;

export class FrameBuilder {
  private readonly keys: (Buffer[] | null)[] = new Array(CACHED).fill(null);
  private readonly frames: Buffer[] = new Array(CACHED);
  private next = 0;
  /** Frames built vs served from the cache, for tests and diagnostics. */
  built = 0;
  reused = 0;

  /** The complete server-to-client text frame for these messages. Buffers are never mutated after
   *  being queued, so the same buffers in the same order always mean the same frame. */
  build(parts: Buffer[]): Buffer {
    for (let k = 0; k < CACHED; k++) {
      const key = this.keys[k];
      if (key !== null && sameParts(key, parts)) {
        this.reused++;
        return this.frames[k];
      }
    }
    const frame = encodeTextFrame(parts);
    this.keys[this.next] = parts;
    this.frames[this.next] = frame;
    this.next = (this.next + 1) % CACHED;
    this.built++;
    return frame;
  }
}

function sameParts(a: Buffer[], b: Buffer[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Unmasked text frame, FIN set, payload = parts joined by newlines. */
export function encodeTextFrame(parts: Buffer[]): Buffer {
  let len = parts.length - 1;
  for (let i = 0; i < parts.length; i++) len += parts[i].length;
  const headerLen = len < 126 ? 2 : len < 65536 ? 4 : 10;
  const out = Buffer.allocUnsafe(headerLen + len);
  out[0] = 0x81;
  if (len < 126) {
    out[1] = len;
  } else if (len < 65536) {
    out[1] = 126;
    out.writeUInt16BE(len, 2);
  } else {
    out[1] = 127;
    out.writeUInt32BE(Math.floor(len / 2 ** 32), 2);
    out.writeUInt32BE(len >>> 0, 6);
  }
  let at = headerLen;
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) out[at++] = NEWLINE;
    at += parts[i].copy(out, at);
  }
  return out;
}
