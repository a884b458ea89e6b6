import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** What `/proc/<pid>/stat` says about a process's parent and CPU time, in clock ticks. */
export interface ProcStat {
  ppid: number;
  /** User and system time of the process itself (all its threads). */
  ownTicks: number;
  /** User and system time of its children that have ended and been waited for. */
  childTicks: number;
}

/**
 * Parses one `/proc/<pid>/stat` line. The command name sits in parentheses and may itself hold spaces
 * and parentheses, so the fields are counted from the last `)`.
 *
 * @example parseProcStat('42 (node) S 1 42 42 0 -1 0 0 0 0 0 150 30 7 3 20 0 11') // → { ppid: 1, ownTicks: 180, childTicks: 10 }
 */
export function parseProcStat(line: string): ProcStat {
  const rest = line
    .slice(line.lastIndexOf(')') + 2)
    .trim()
    .split(/\s+/);
  const field = (i: number) => {
    const n = Number(rest[i]);
    if (!Number.isFinite(n)) throw new Error(`unexpected /proc stat line: ${line.slice(0, 120)}`);
    return n;
  };
  // after the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14)
  return { ppid: field(1), ownTicks: field(11) + field(12), childTicks: field(13) + field(14) };
}

/** Clock ticks per second (`getconf CLK_TCK`), 100 where it cannot be asked. */
export function clockTicksPerSecond(): number {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
}

/** The stat of a live process, or undefined when it is gone (or /proc is not there). */
export function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The command name of a live process (`/proc/<pid>/comm`), or undefined. */
export function processName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds of a server that forks a process per connection (PostgreSQL): the postmaster, its live
 * children, and the children that ended (counted in the postmaster's child time once it has reaped
 * them). Parents are looked up once per pid, so a sample reads only the tree's own stat files.
 *
 * @example const pgCpu = createProcessTreeCpu(postmasterPid, 100); pgCpu() // → 12.4
 */
export function createProcessTreeCpu(rootPid: number, ticksPerSecond: number): () => number | undefined {
  const parentOf = new Map<number, number>();
  return () => {
    const root = readProcStat(rootPid);
    if (!root) return undefined;
    let ticks = root.ownTicks + root.childTicks;
    let pids: number[];
    try {
      pids = readdirSync('/proc')
        .filter((name) => /^\d+$/.test(name))
        .map(Number);
    } catch {
      return ticks / ticksPerSecond;
    }
    const alive = new Set(pids);
    for (const pid of parentOf.keys()) if (!alive.has(pid)) parentOf.delete(pid);
    for (const pid of pids) {
      if (!parentOf.has(pid)) parentOf.set(pid, readProcStat(pid)?.ppid ?? -1);
      if (parentOf.get(pid) !== rootPid) continue;
      const child = readProcStat(pid);
      if (child) ticks += child.ownTicks + child.childTicks;
    }
    return ticks / ticksPerSecond;
  };
}
