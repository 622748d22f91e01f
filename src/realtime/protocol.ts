// JSON shapes of the Centrifugo bidirectional protocol (client.proto field names), limited to
// what this server reads and writes, plus frame splitting/joining. A frame holds one or more
// newline-delimited JSON messages in both directions.
import type { ProtocolError } from './codes.js';

export interface StreamPosition {
  offset: number;
  epoch: string;
}

export interface ConnectRequest {
  token?: string;
  data?: unknown;
  name?: string;
  version?: string;
  subs?: Record<string, unknown>;
}

export interface SubscribeRequest {
  channel: string;
  token?: string;
  data?: unknown;
  recover?: boolean;
  offset?: number;
  epoch?: string;
  positioned?: boolean;
  recoverable?: boolean;
  join_leave?: boolean;
  flag?: number;
}

export interface UnsubscribeRequest {
  channel: string;
}

export interface HistoryRequest {
  channel: string;
  limit?: number;
  since?: { offset?: number; epoch?: string };
  reverse?: boolean;
}

/** A client command. Exactly one method member is set; `id` is absent for `send` and pong. */
export interface ClientCommand {
  id?: number;
  connect?: ConnectRequest;
  subscribe?: SubscribeRequest;
  unsubscribe?: UnsubscribeRequest;
  history?: HistoryRequest;
  [method: string]: unknown;
}

/** Subscribe flags the client sets (centrifuge-js `subscriptionFlags`). */
export const SubscribeFlag = {
  channelCompaction: 1,
  /** Fail the subscribe with 112 instead of answering `recovered: false`. */
  rejectUnrecovered: 2,
} as const;

/** A publication as it travels in pushes and in subscribe/history results. */
export interface WirePublication {
  data: unknown;
  offset?: number;
}

export interface SubscribeResult {
  recoverable?: boolean;
  positioned?: boolean;
  epoch?: string;
  offset?: number;
  publications?: WirePublication[];
  recovered?: boolean;
  was_recovering?: boolean;
}

/** Splits a received frame into commands. Throws on malformed JSON (→ bad request). */
export function parseFrame(frame: string): ClientCommand[] {
  const out: ClientCommand[] = [];
  for (const line of frame.split('\n')) {
    if (line.trim() === '') continue;
    const msg: unknown = JSON.parse(line);
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
      throw new SyntaxError('command is not an object');
    }
    out.push(msg as ClientCommand);
  }
  return out;
}

export function encodeReply(id: number, method: string, result: unknown): string {
  return JSON.stringify({ id, [method]: result });
}

export function encodeErrorReply(id: number, error: ProtocolError): string {
  return JSON.stringify({ id, error });
}

/** Encodes a publication push once; the bytes are shared by every subscriber. */
export function encodePublicationPush(channel: string, pub: WirePublication): Buffer {
  return Buffer.from(JSON.stringify({ push: { channel, pub } }));
}

export function encodeUnsubscribePush(channel: string, code: number, reason: string): string {
  return JSON.stringify({ push: { channel, unsubscribe: { code, reason } } });
}

export function encodeDisconnectPush(code: number, reason: string, reconnect: boolean): string {
  return JSON.stringify({ push: { disconnect: { code, reason, reconnect } } });
}

/** The server ping and the client pong are both an empty message. */
export const PING = Buffer.from('{}');
