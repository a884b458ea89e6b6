import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_DIR = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = fileURLToPath(new URL('../../bin/erc20-etl.js', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `erc20-etl ARGS…` to completion. */
export function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_DIR, env: { ...process.env, ...options.env } });
  return collect(child, options.timeoutMs ?? 60_000);
}

export function collect(child: ChildProcess, timeoutMs: number): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`erc20-etl did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Starts `erc20-etl devnet ARGS… --port 0` and resolves once it prints where it listens. */
export async function spawnDevnet(args: string[]): Promise<{ child: ChildProcess; origin: string; output: () => string }> {
  const child = spawn(process.execPath, [BIN, 'devnet', '--port', '0', ...args], { cwd: REPO_DIR });
  let out = '';
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`devnet did not start: ${out}`)), 60_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[0-9.]+:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`devnet exited with ${code}: ${out}`)));
  });
  return { child, origin, output: () => out };
}
