/** Fault injection of the reference server: each fault off unless its option is set, decided by a seeded random source. */
export interface FaultOptions {
  /** Added delay per request, uniform in [min, max] ms. */
  latencyMs?: readonly [number, number];
  /** Probability of a 500, 502 or 503 instead of the answer. */
  failRate?: number;
  /** Probability that the socket is destroyed mid-response. */
  resetRate?: number;
  /** Probability that the body is cut short (the HTTP response itself ends cleanly). */
  truncateRate?: number;
  /** Probability that a block hash is "not found" the first time it is asked for. */
  headerLagRate?: number;
  /** Probability that an `eth_getLogs` call over more than one block is never answered (the node hangs). */
  logsHangRate?: number;
}

const FAIL_STATUSES = [500, 502, 503] as const;

export function createFaults(options: FaultOptions, random: () => number) {
  const asked = new Set<string>();
  const hit = (rate: number | undefined) => rate !== undefined && rate > 0 && random() < rate;
  return {
    latencyMs(): number {
      const range = options.latencyMs;
      if (!range) return 0;
      const [min, max] = range;
      return min + Math.floor(random() * (max - min + 1));
    },
    failure(): 500 | 502 | 503 | undefined {
      if (!hit(options.failRate)) return undefined;
      return FAIL_STATUSES[Math.floor(random() * FAIL_STATUSES.length)] ?? 500;
    },
    cut(): 'reset' | 'truncated' | undefined {
      if (hit(options.resetRate)) return 'reset';
      if (hit(options.truncateRate)) return 'truncated';
      return undefined;
    },
    /** `true` when this `eth_getLogs` call over more than one block must hang: no answer, the socket left open. */
    logsHang(): boolean {
      return hit(options.logsHangRate);
    },
    /** `true` when this lookup of `hash` must answer "not found" (only ever its first lookup). */
    headerLags(hash: string): boolean {
      if (!options.headerLagRate || asked.has(hash)) return false;
      asked.add(hash);
      return hit(options.headerLagRate);
    },
  };
}
