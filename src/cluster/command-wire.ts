/**
 * What travels between a gateway and the engine leader on the submit subject: the command as the journal's
 * JSON text holds it (its gateway request id in the `Perpx-Request-Id` header), and the leader's answer as JSON in which a bigint (the engine's Money amounts in
 * replies and events) is written `{"$bigint":"<digits>"}`, so amounts cross exactly.
 */
import type { CommandInput } from '../engine/commands.js';
import type { RecordedOutcome } from './request-ledger.js';

/**
 * A command's answer carries its reply, not its events: the gateway's follower applies the command and gets
 * them there, and no route reads them from the answer.
 */
export type SubmitAnswer =
  | ({ ok: true } & RecordedOutcome)
  /** The leader could not take the command; `code` as the gateway reports it (SHUTTING_DOWN, JOURNAL_UNAVAILABLE…). */
  | { ok: false; code: string; message: string };

const text = new TextEncoder();
const bytesToText = new TextDecoder();

const writeBigint = (_key: string, value: unknown): unknown => (typeof value === 'bigint' ? { $bigint: value.toString() } : value);

function readBigint(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const tagged = (value as { $bigint?: unknown }).$bigint;
    if (typeof tagged === 'string' && Object.keys(value).length === 1) return BigInt(tagged);
  }
  return value;
}

export const encodeCommand = (input: CommandInput): Uint8Array => text.encode(JSON.stringify(input));

/** The command, or an Error saying why the bytes are not one. */
export function decodeCommand(bytes: Uint8Array): CommandInput | Error {
  let value: unknown;
  try {
    value = JSON.parse(bytesToText.decode(bytes));
  } catch (err) {
    return new Error(`command is not JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || typeof (value as { kind?: unknown }).kind !== 'string') {
    return new Error('command must be a JSON object with a string "kind"');
  }
  return value as CommandInput;
}

export const encodeAnswer = (answer: SubmitAnswer): Uint8Array => text.encode(JSON.stringify(answer, writeBigint));

export const decodeAnswer = (bytes: Uint8Array): SubmitAnswer => JSON.parse(bytesToText.decode(bytes), readBigint) as SubmitAnswer;
