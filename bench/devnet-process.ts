import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { packageRoot } from '../src/common/package-root.ts';
import type { DevnetStats } from '../src/devnet/stats.ts';

export const REPO_DIR = packageRoot();
export const BIN = join(REPO_DIR, 'bin', 'erc20-etl.js');
export const BENCH_PROJECT = 'bench';
/** Generating a large synthetic chain takes a while on a busy machine. */
const START_TIMEOUT_MS = 600_000;

export interface DevnetChain {
  transfers: number;
  blocks: number;
  tokens: number;
  seed?: number;
}

export interface DevnetProcess {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** The base URL the exporter is given: origin and project id. */
  apiUrl: string;
  pid: number;
  /** Seconds from spawn to listening, generation of the chain included. */
  startupSeconds: number;
  /** Newest block and the token contracts that have transfers. */
  head: number;
  contracts: string[];
  stats(): Promise<DevnetStats>;
  resetStats(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `erc20-etl devnet --port 0` in its own process on a synthetic chain, plus any extra flags
 * (`--latency-ms 50`, `--rate-limit 20`), and resolves once it listens.
 *
 * @example
 * const devnet = await startDevnetProcess({ transfers: 100_000, blocks: 10_000, tokens: 3 }, ['--rate-limit', '20']);
 * devnet.apiUrl // → 'http://127.0.0.1:40123/bench'
 * await devnet.stop();
 */
export async function startDevnetProcess(chain: DevnetChain, extra: readonly string[] = []): Promise<DevnetProcess> {
  const started = performance.now();
  const args = ['devnet', '--port', '0', '--project-id', BENCH_PROJECT, '--seed', String(chain.seed ?? 1)];
  args.push('--blocks', String(chain.blocks), '--tokens', String(chain.tokens), '--transfers', String(chain.transfers), ...extra);
  const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let errors = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (errors = `${errors}${d.toString()}`.slice(-4000)));
  try {
    const origin = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the reference server did not listen within ${START_TIMEOUT_MS / 1000} s:\n${out}${errors}`)), START_TIMEOUT_MS);
      child.stdout.on('data', () => {
        const m = /listening on (http:\/\/[0-9.]+:\d+)/.exec(out);
        if (!m) return;
        clearTimeout(timer);
        resolve(m[1]!);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the reference server exited with ${code} before listening:\n${out}${errors}`));
      });
    });
    const startupSeconds = (performance.now() - started) / 1000;
    const health = (await getJson(`${origin}/healthz`)) as { head: number };
    const contracts = ((await getJson(`${origin}/__contracts`)) as { contractAddress: string }[]).map((c) => c.contractAddress);
    return {
      origin,
      apiUrl: `${origin}/${BENCH_PROJECT}`,
      pid: child.pid!,
      startupSeconds,
      head: health.head,
      contracts,
      stats: async () => (await getJson(`${origin}/__stats`)) as DevnetStats,
      resetStats: async () => {
        const res = await fetch(`${origin}/__control/reset-stats`, { method: 'POST' });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`POST /__control/reset-stats answered HTTP ${res.status}`);
      },
      stop: () => stopChild(child),
    };
  } catch (err) {
    await stopChild(child);
    throw err;
  }
}

async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url} answered HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
  return res.json();
}

/** SIGTERM, and SIGKILL if it has not ended after 10 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
