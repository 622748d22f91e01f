/**
 * Lowers the scheduling priority of the calling worker thread (Linux; elsewhere a no-op).
 *
 * The event loop is the exchange's serial path: every request, command and reply crosses it. Helper
 * threads (signature recovery, read-model projection) only add parallel capacity. When the cores are
 * oversubscribed (a 2-core box running the server, its helpers and clients), a helper woken by a
 * postMessage preempts the event loop on its core (docs/performance.md, "HTTP gateway"). A niced helper still gets every cycle nobody else wants, but no longer
 * displaces the event loop.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** Nice increment for CPU-heavy helper threads. */
export const HELPER_THREAD_NICE = 10;

/** Adds `increment` to this thread's nice value; false when the platform does not allow it. */
export function lowerThreadPriority(increment = HELPER_THREAD_NICE): boolean {
  try {
    // /proc/thread-self → "<pid>/task/<tid>"; setpriority(PRIO_PROCESS, tid) affects just that thread.
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isSafeInteger(tid)) return false;
    setPriority(tid, Math.min(19, getPriority(tid) + increment));
    return true;
  } catch {
    return false;
  }
}
