/**
 * Retrying a command-log append across a NATS outage (a server restart, a lost connection), so the leader
 * resumes by itself instead of failing stop on the first ack that times out. Safe because every append
 * carries a message id (the server's duplicate window answers a second copy of a stored append with its
 * original ack) and the stream sequence it must follow (a copy that arrives out of place is refused), and
 * because an append is retried only once its predecessor is stored, so retries keep the log's order.
 */
import { JetStreamApiError } from '@nats-io/jetstream';
import { RequestError, TimeoutError } from '@nats-io/transport-node';

/** JetStream's "wrong last sequence": another writer appended first, or a predecessor of this append is missing. */
export const WRONG_LAST_SEQUENCE = 10071;

/** Whether the append may not have reached the server (connection lost, ack timed out, JetStream not ready yet). */
function transient(err: unknown): boolean {
  if (err instanceof TimeoutError || (err instanceof RequestError && (err.isNoResponders() || err.cause instanceof TimeoutError))) return true;
  if (err instanceof JetStreamApiError) return err.status === 503;
  const text = err instanceof Error ? `${err.name} ${err.message}` : '';
  return /CONNECTION_(CLOSED|DRAINING)|disconnect|closed|no responders|timeout/i.test(text);
}

/**
 * `send()` once; after a transient failure, waits for `previous` (the append before it) and sends again,
 * with backoff, until `retryForMs` have passed. A wrong-last-sequence answer to the first send is retried once
 * after `previous` is stored (this append overtook a predecessor that was being retried); twice, it is another
 * writer (fencing) and final.
 */
export async function appendWithRetry<T>(send: () => Promise<T>, previous: Promise<unknown>, retryForMs: number): Promise<T> {
  const deadline = Date.now() + retryForMs;
  let err: unknown;
  try {
    return await send();
  } catch (first) {
    err = first;
  }
  const overtaken = err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE;
  if (!overtaken && !transient(err)) throw err;
  await previous;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0 || !overtaken) {
      if (!transient(err) || Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
    }
    try {
      return await send();
    } catch (again) {
      err = again;
    }
  }
}
