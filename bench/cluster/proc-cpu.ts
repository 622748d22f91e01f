/**
 * CPU time of other processes from Linux /proc (USER_HZ = 100, so 10 ms resolution): a role process by pid
 * (all its threads), split by thread name (the exchange's workers name themselves, src/workers/thread-name.ts),
 * the NATS server listening on a port, and the PostgreSQL backends serving given databases. NaN / empty
 * elsewhere than Linux.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** utime + stime in ms from a /proc stat line (fields after the parenthesised name). */
function statCpuMs(stat: string): number {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

export function processCpuMs(pid: number): number {
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return NaN;
  }
}

/** CPU ms so far of each kind of thread of `pid`: main, perpx-<worker> names, the rest as "helpers" (GC, compiler, libuv). */
export function threadCpuMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const ms = statCpuMs(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1'));
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'latin1').trim();
      const name = Number(tid) === pid ? 'main' : comm.startsWith('perpx-') ? comm.slice('perpx-'.length) : 'helpers';
      out.set(name, (out.get(name) ?? 0) + ms);
    } catch {
      // the thread ended between readdir and read
    }
  }
  return out;
}

/** Socket inodes of TCP sockets listening on `port` (IPv4 and IPv6). */
function listeningInodes(port: number): Set<string> {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    try {
      for (const line of readFileSync(file, 'latin1').split('\n').slice(1)) {
        const f = line.trim().split(/\s+/);
        if (f.length > 9 && f[1].endsWith(`:${hex}`) && f[3] === '0A') inodes.add(f[9]);
      }
    } catch {
      // no IPv6, or not Linux
    }
  }
  return inodes;
}

/** Pid of the process listening on TCP `port` (the machine's nats-server), or undefined. */
export function listenerPid(port: number): number | undefined {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1])) return Number(pid);
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

/** Pids of the PostgreSQL backends connected to any of `databases` (title "postgres: [cluster: ]user db host …"). */
export function postgresBackendPids(databases: readonly string[]): number[] {
  const pids: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'latin1').replace(/\0/g, ' ').trim();
      const m = /^postgres: (?:\S+: )?\S+ (\S+) /.exec(title);
      if (m && databases.includes(m[1])) pids.push(Number(pid));
    } catch {
      // ended meanwhile
    }
  }
  return pids;
}

/** Busy CPU ms of the whole machine so far (user + nice + system + irq + softirq of /proc/stat), and steal. */
export function machineBusyMs(): { busy: number; steal: number } {
  try {
    const f = readFileSync('/proc/stat', 'latin1').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = f;
    return { busy: (user + nice + system + irq + softirq) * 10, steal: (steal ?? 0) * 10 };
  } catch {
    return { busy: NaN, steal: NaN };
  }
}
