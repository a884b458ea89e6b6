import { systemClock } from '../common/clock.ts';
import { ConfigError, FatalError } from '../common/errors.ts';
import { createLogger } from '../common/logger.ts';
import { createSourceCounters } from '../common/source-counters.ts';
import { SOURCE_EXPECTED, SOURCE_KINDS, type SourceKind } from '../config/job-schema.ts';
import { rpcTimeoutMs } from '../config/load-job.ts';
import { checkAll } from '../config/check-all.ts';
import { resolveSettings } from '../config/settings.ts';
import { HttpStatusError, ResponseTooLargeError } from '../source/errors.ts';
import { CallTimeoutError, createHttpClient, type HttpClient } from '../source/http-client.ts';
import { createNodeSource } from '../source/node-source.ts';
import { rpcCall } from '../source/node-rpc.ts';
import type { ConnectionFlags } from './connection-flags.ts';
import { probeEndpoint, probeText, type BatchReply, type CallReply, type ProbeDeps } from './probe-endpoint.ts';

/** The flags of `erc20-etl probe`, as commander hands them over. */
export interface ProbeFlags extends ConnectionFlags {
  source?: string;
  json?: boolean;
  rpcTimeout?: string;
}

/** The most the probe reads of one answer: a wide `eth_getLogs` on a busy chain is refused past it, as too large. */
const PROBE_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
const NO_CONTRACT = `0x${'00'.repeat(20)}`;

/**
 * `erc20-etl probe [--source node] [--api-url URL] [--json]`: asks the endpoint what a source of that kind
 * needs (chain id, head, header methods, for a node the largest `eth_getLogs` span and answer it takes and
 * its batch limit; for the builder API its page API), prints it as text or one JSON object, and fails
 * (exit 1) naming what is missing. Every line is redacted: a node's error may repeat its URL.
 */
export async function probe(flags: ProbeFlags): Promise<void> {
  const known = (() => {
    try {
      return sourceKind(flags.source);
    } catch {
      return 'any';
    }
  })();
  const [source, timeoutMs, { api }] = await checkAll([
    () => sourceKind(flags.source),
    () => rpcTimeoutMs(flags),
    () => resolveSettings({ flags, env: process.env, needs: { database: false, api: true }, source: known }),
  ]);
  const endpoint = api!;
  const logger = createLogger();
  const counters = createSourceCounters();
  const http = createHttpClient({
    endpoint,
    config: { timeoutMs, connections: 2, maxResponseBytes: PROBE_MAX_RESPONSE_BYTES, retries: 2 },
    logger,
    clock: systemClock,
    counters,
  });
  try {
    const deps: ProbeDeps = { source, ...probeCalls(http, timeoutMs) };
    if (source === 'node') {
      // what a run will see: the node source's own chain id and Erigon test
      const node = createNodeSource({ http, counters, headerBatchSize: 100, rpcTimeoutMs: timeoutMs });
      deps.chainId = () => node.chainId();
      deps.supportsErigon = () => node.supportsErigon();
    } else {
      deps.page = async (head) => {
        const block = String(head ?? 0);
        await http.getJson(`/builder/getTokenTransfers?contractAddress=${NO_CONTRACT}&fromBlock=${block}&toBlock=${block}&pageSize=1`);
      };
    }
    const findings = await probeEndpoint(deps);
    const text = flags.json ? `${JSON.stringify({ endpoint: endpoint.redacted, ...findings })}\n` : probeText(findings, endpoint.redacted);
    process.stdout.write(endpoint.redact(text));
    if (findings.missing.length) {
      throw new FatalError(endpoint.redact(`probe: the endpoint lacks what a ${source} source needs: ${findings.missing.join('; ')}.`));
    }
  } finally {
    await http.close();
  }
}

/** `--source`: builder (the default) or node. */
function sourceKind(text: string | undefined): SourceKind {
  if (text === undefined) return 'builder';
  if ((SOURCE_KINDS as readonly string[]).includes(text)) return text as SourceKind;
  throw new ConfigError(`--source: ${SOURCE_EXPECTED}, got ${JSON.stringify(text)}.`);
}

/** The probe's calls over the HTTP client: JSON-RPC errors, deadlines and oversized answers become replies; anything else throws. */
function probeCalls(http: HttpClient, timeoutMs: number): Pick<ProbeDeps, 'call' | 'batch'> {
  return {
    async call(method, params): Promise<CallReply> {
      try {
        const outcome = await rpcCall(http, method, params, undefined, { timeoutMs });
        return 'error' in outcome ? { error: outcome.error } : { result: outcome.result };
      } catch (err) {
        if (err instanceof CallTimeoutError) return { timedOut: `no answer within ${timeoutMs / 1000} s` };
        if (err instanceof ResponseTooLargeError) return { tooLarge: `an answer larger than ${PROBE_MAX_RESPONSE_BYTES / (1024 * 1024)} MB` };
        throw err;
      }
    },
    async batch(size): Promise<BatchReply> {
      const calls = Array.from({ length: size }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'eth_blockNumber', params: [] }));
      try {
        return { answers: await http.postJson(calls, undefined, { timeoutMs }) };
      } catch (err) {
        // a batch refused for its size: 400 or 413 with or without a JSON-RPC error; 401, 403, 429 and 5xx are not about size
        if (err instanceof HttpStatusError && err.status >= 400 && err.status < 500 && ![401, 403, 429].includes(err.status)) {
          return {
            refused: [`HTTP ${err.status}`, err.apiCode, err.apiMessage === undefined ? undefined : JSON.stringify(err.apiMessage)].filter((v) => v !== undefined).join(' '),
          };
        }
        if (err instanceof ResponseTooLargeError) return { refused: `an answer larger than ${PROBE_MAX_RESPONSE_BYTES / (1024 * 1024)} MB` };
        if (err instanceof CallTimeoutError) return { timedOut: `no answer within ${timeoutMs / 1000} s` };
        throw err;
      }
    },
  };
}
