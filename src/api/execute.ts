/** Runs a command through the sequencer and turns an engine refusal into the HTTP error it names. */
import type { Reply } from '../engine/records.js';
import type { CommandInput, Submit } from '../engine/commands.js';
import { ApiError } from './errors.js';

export type OkReply = Extract<Reply, { ok: true }>;

export function execute(submit: Submit, cmd: CommandInput): Promise<OkReply> {
  // A chained promise rather than an async function: one layer less per command on the event loop.
  return submit(cmd).then(({ reply }) => {
    if (!reply.ok) throw ApiError.from(reply.error);
    return reply;
  });
}
