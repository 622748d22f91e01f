// A minimal websocket client for the fan-out benchmark: raw TCP, the RFC 6455 handshake and a
// frame parser that counts messages without building strings or 'message' events per frame.
// The `ws` client spends several µs of JS per frame (a Writable stream per socket, a Buffer and
// an event per message); with thousands of sockets on the same 2 cores that steals CPU from the
// server under test. Both bench phases (protocol and raw ceiling) use this same client.
import { randomBytes } from 'node:crypto';
import net from 'node:net';

export interface LeanHandlers {
  /** The websocket handshake completed. */
  onOpen(): void;
  /** A complete text frame while the client is handshaking (connect/subscribe replies). */
  onText(text: string): void;
  /**
   * A complete data frame. `messages` = newline-delimited messages in it; `parts` holds the
   * payload only when the connection keeps payloads (latency probes), else it is empty.
   */
  onFrame(messages: number, parts: Buffer[]): void;
  onClose(): void;
  onError(err: Error): void;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

/** One masked client frame (clients must mask; the key is random per frame). */
export function clientTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  return clientFrame(0x1, payload);
}

function clientFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const headerLen = len < 126 ? 2 : len < 65536 ? 4 : 10;
  const out = Buffer.allocUnsafe(headerLen + 4 + len);
  out[0] = 0x80 | opcode;
  if (len < 126) out[1] = 0x80 | len;
  else if (len < 65536) {
    out[1] = 0x80 | 126;
    out.writeUInt16BE(len, 2);
  } else {
    out[1] = 0x80 | 127;
    out.writeBigUInt64BE(BigInt(len), 2);
  }
  const mask = randomBytes(4);
  mask.copy(out, headerLen);
  const body = headerLen + 4;
  for (let i = 0; i < len; i++) out[body + i] = payload[i] ^ mask[i & 3];
  return out;
}

export class LeanClient {
  private readonly socket: net.Socket;
  private upgraded = false;
  private head: Buffer | null = null;
  /** Bytes of a frame header split across reads. */
  private partialHeader: Buffer | null = null;
  /** Payload bytes still to come for the current frame. */
  private remaining = 0;
  private opcode = 0;
  private newlines = 0;
  private parts: Buffer[] = [];
  /** Text frames go to onText (as strings) while true; then to onFrame (counted). */
  handshaking = true;
  /** Collect payload bytes: needed while handshaking, and for latency probes. */
  keepPayload = true;
  private closed = false;

  constructor(port: number, host: string, path: string, private readonly h: LeanHandlers) {
    const key = randomBytes(16).toString('base64');
    // `onread` with one shared buffer: reads skip the stream machinery and a Buffer per read.
    this.socket = net.connect({ port, host, onread: { buffer: READ_BUFFER, callback: (n, buf) => this.onRead(n, buf) } });
    this.socket.setNoDelay(true);
    this.socket.on('connect', () => {
      this.socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    this.socket.on('error', (err) => h.onError(err));
    this.socket.on('close', () => {
      if (!this.closed) {
        this.closed = true;
        h.onClose();
      }
    });
  }

  sendText(text: string): void {
    this.socket.write(clientTextFrame(text));
  }

  terminate(): void {
    this.closed = true;
    this.socket.destroy();
  }

  private onRead(n: number, buf: Uint8Array): boolean {
    // The shared buffer is overwritten by the next read: whatever outlives this call is copied.
    this.onData(Buffer.from(buf.buffer, buf.byteOffset, n));
    return true;
  }

  private onData(chunk: Buffer): void {
    if (!this.upgraded) {
      this.head = this.head ? Buffer.concat([this.head, chunk]) : Buffer.from(chunk);
      const end = this.head.indexOf(HEADER_END);
      if (end === -1) return;
      const status = this.head.toString('latin1', 0, end);
      if (!status.startsWith('HTTP/1.1 101')) {
        this.h.onError(new Error(`upgrade refused: ${status.split('\r\n')[0]}`));
        this.socket.destroy();
        return;
      }
      this.upgraded = true;
      chunk = this.head.subarray(end + HEADER_END.length);
      this.head = null;
      this.h.onOpen();
      if (chunk.length === 0) return;
    }
    this.parse(chunk);
  }

  private parse(chunk: Buffer): void {
    if (this.partialHeader) {
      chunk = Buffer.concat([this.partialHeader, chunk]);
      this.partialHeader = null;
    }
    let pos = 0;
    const n = chunk.length;
    while (pos < n) {
      if (this.opcode === 0) {
        // Frame header: 2 bytes, + 2 or 8 for the length (server frames are never masked).
        const b1 = n - pos >= 2 ? chunk[pos + 1] & 0x7f : 0;
        const headerLen = b1 < 126 ? 2 : b1 === 126 ? 4 : 10;
        if (n - pos < headerLen) {
          this.partialHeader = Buffer.from(chunk.subarray(pos));
          return;
        }
        this.remaining = b1 < 126 ? b1 : b1 === 126 ? chunk.readUInt16BE(pos + 2) : Number(chunk.readBigUInt64BE(pos + 2));
        this.opcode = chunk[pos] & 0x0f || 0x1; // a continuation frame continues a text message here
        this.newlines = 0;
        pos += headerLen;
        if (this.remaining === 0) {
          this.endFrame();
          continue;
        }
      }
      const end = pos + Math.min(this.remaining, n - pos);
      const view = chunk.subarray(pos, end);
      if (this.opcode === 0x1) {
        let i = -1;
        while ((i = view.indexOf(10, i + 1)) !== -1) this.newlines++;
      }
      if (this.keepPayload || this.opcode >= 0x8) this.parts.push(Buffer.from(view));
      this.remaining -= end - pos;
      pos = end;
      if (this.remaining === 0) this.endFrame();
    }
  }

  private endFrame(): void {
    const opcode = this.opcode;
    const parts = this.parts;
    this.opcode = 0;
    this.parts = [];
    if (opcode === 0x9) {
      this.socket.write(clientFrame(0xa, Buffer.concat(parts))); // pong
    } else if (opcode === 0x8) {
      this.closed = true;
      this.socket.destroy();
      this.h.onClose();
    } else if (opcode === 0x1) {
      if (this.handshaking) this.h.onText(Buffer.concat(parts).toString());
      else this.h.onFrame(this.newlines + 1, parts);
    }
  }
}
