/**
 * Names the calling thread (Linux, at most 15 characters): `top -H`, `ps -L` and the HTTP benchmark's
 * per-thread CPU split then tell the exchange's worker threads apart. A no-op where /proc is missing.
 */
import { writeFileSync } from 'node:fs';

export function nameThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // not Linux, or /proc not mounted: the name is only a diagnostic
  }
}
