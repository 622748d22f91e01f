/**
 * CPU_PROF=1: every server process runs with `--cpu-prof` (NODE_OPTIONS does not take it), writing its main thread's profile
 * when it stops; only the samples taken inside the measured window are summarized (the profile's clock and
 * process.hrtime are both the monotonic clock), so start-up and sign-in do not count.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { summarize, type Profile } from '../http/cpu-profile.js';

/** The samples of `p` taken in [fromUs, toUs] (monotonic clock, µs). */
export function windowOf(p: Profile, fromUs: number, toUs: number): Profile {
  const samples: number[] = [];
  const deltas: number[] = [0];
  let t = p.startTime;
  const all = p.samples ?? [];
  for (let i = 0; i < all.length; i++) {
    t += p.timeDeltas?.[i] ?? 0;
    if (t < fromUs || t > toUs) continue;
    samples.push(all[i]);
    deltas.push(p.timeDeltas?.[i + 1] ?? 0);
  }
  return { ...p, samples, timeDeltas: deltas };
}

/** Main-thread profiles (file CPU.<date>.<time>.<pid>.0.<n>.cpuprofile) of `pids` in `dir`, summarized over the window. */
export function summarizeProfiles(dir: string, processes: Array<{ role: string; pid: number }>, windowUs: [number, number], orders: number): string[] {
  let files: string[] = [];
  try {
    files = readdirSync(dir);
  } catch {
    return [`no CPU profiles in ${dir}`];
  }
  const out: string[] = [];
  for (const { role, pid } of processes) {
    const file = files.find((f) => f.split('.')[3] === String(pid) && f.split('.')[4] === '0');
    if (!file) {
      out.push(`${role}: no profile written (pid ${pid})`);
      continue;
    }
    const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
    out.push(`${role} (${join(dir, file)}), window only:\n${summarize(windowOf(p, windowUs[0], windowUs[1]), 12, orders)}`);
  }
  return out;
}
