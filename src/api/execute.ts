/** Runs a command through the sequencer and turns an engine refusal into the HTTP error it names. */
import type { Reply } from '../engine/records.js';
import type { CommandInput, Submit } from './deps.js';
import { ApiError } from './errors.js';

export type OkReply = Extract<Reply, { ok: true }>;

export async function execute(submit: Submit, cmd: CommandInput): Promise<OkReply> {
  const { reply } = await submit(cmd);
  if (!reply.ok) throw ApiError.from(reply.error);
  return reply;
}
