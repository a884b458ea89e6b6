import { withClient } from './bench-database.ts';
import { createProcessTreeCpu, processName, readProcStat } from './proc-stat.ts';

/**
 * CPU seconds of the PostgreSQL server, when it runs on this machine and its processes can be seen in
 * /proc: its checkpointer's parent is the postmaster (checked by name, so a server in a container whose
 * process ids mean something else here is left out). Undefined when it cannot be seen.
 *
 * @example const pgCpu = await postgresCpuProbe(server.serverUrl, 100); pgCpu?.() // → 1234.5
 */
export async function postgresCpuProbe(serverUrl: string, ticksPerSecond: number): Promise<(() => number | undefined) | undefined> {
  const pid = await withClient(serverUrl, async (c) => {
    const { rows } = await c.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'");
    return rows[0]?.pid;
  }).catch(() => undefined);
  if (pid === undefined) return undefined;
  const postmaster = readProcStat(pid)?.ppid;
  if (postmaster === undefined || processName(pid) !== 'postgres' || processName(postmaster) !== 'postgres') return undefined;
  return createProcessTreeCpu(postmaster, ticksPerSecond);
}
