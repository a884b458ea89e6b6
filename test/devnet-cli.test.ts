import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { collect, REPO_DIR, runCli, spawnDevnet } from './helpers/cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'erc20-etl-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const files = ['headers.jsonl', 'transfers.jsonl', 'tokens.jsonl'];
const read = (dir: string) => files.map((f) => readFileSync(join(dir, f)));

describe('erc20-etl devnet', () => {
  it('runs through npx right after install, and stops cleanly on SIGTERM and SIGINT', async () => {
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'erc20-etl', 'devnet', '--help'], { cwd: REPO_DIR });
    expect(stdout).toMatch(/--header-lag-rate/);
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const devnet = await spawnDevnet(['--blocks', '100', '--transfers', '300', '--tokens', '3']);
      const health = await fetch(`${devnet.origin}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok', transfers: 300, headers: 100 });
      devnet.child.kill(signal);
      const result = await collect(devnet.child, 10_000);
      expect(result.code).toBe(0);
    }
  });

  it('reports every bad flag at once, naming each, and exits 2', async () => {
    const result = await runCli(['devnet', '--blocks', '-3', '--fail-rate', '2', '--port', 'abc', '--project-id', '__x']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--blocks: expected an integer ≥ 1, got "-3"/);
    expect(result.stderr).toMatch(/--fail-rate: expected a probability from 0 to 1/);
    expect(result.stderr).toMatch(/--port: expected an integer ≥ 0, got "abc"/);
    expect(result.stderr).toMatch(/--project-id: is reserved/);
  });

  it('says a port in use is in use and exits 2, not with a stack trace', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((holder.address() as AddressInfo).port);
      const result = await runCli(['devnet', '--port', port, '--blocks', '20', '--transfers', '10', '--tokens', '1']);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`erc20-etl: The reference server cannot listen on 127.0.0.1:${port}: that port is in use by another process (EADDRINUSE).`);
      expect(result.stderr).not.toMatch(/unexpected failure|\n\s+at /);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('says what is wrong with a dataset folder, with file and line', async () => {
    const result = await runCli(['devnet', '--dataset', join(tmp, 'nowhere')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/headers.jsonl: missing/);
  });

  it('dumps the same bytes for the same seed, other bytes for another seed', async () => {
    const flags = ['--blocks', '300', '--transfers', '2000', '--tokens', '5'];
    for (const [dir, seed] of [
      ['a', '3'],
      ['b', '3'],
      ['c', '4'],
    ] as const) {
      const result = await runCli(['devnet', 'dump', '--out', join(tmp, dir), '--seed', seed, ...flags]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/wrote 300 headers, 2000 transfers/);
    }
    const [a, b, c] = [read(join(tmp, 'a')), read(join(tmp, 'b')), read(join(tmp, 'c'))];
    for (const [i, bytes] of a.entries()) expect(bytes.equals(b[i]!), files[i]).toBe(true);
    expect(a[0]!.equals(c[0]!)).toBe(false);
  });

  it('dumps realistic amounts with --amounts realistic: the same chain, other values', async () => {
    const flags = ['--blocks', '300', '--transfers', '2000', '--tokens', '5', '--seed', '3'];
    const result = await runCli(['devnet', 'dump', '--out', join(tmp, 'realistic'), '--amounts', 'realistic', ...flags]);
    expect(result.code, result.stderr).toBe(0);
    const [edge, realistic] = [read(join(tmp, 'a')), read(join(tmp, 'realistic'))];
    expect(realistic[0]!.equals(edge[0]!), 'headers.jsonl').toBe(true);
    expect(realistic[2]!.equals(edge[2]!), 'tokens.jsonl').toBe(true);
    const values = (bytes: Buffer) =>
      bytes
        .toString('utf8')
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { value: string }).value);
    expect(values(realistic[1]!)).toHaveLength(2000);
    expect(values(realistic[1]!).filter((v) => v.length > 30)).toEqual([]);
    expect(values(edge[1]!).filter((v) => v.length > 30).length).toBeGreaterThan(0);
  });

  it('serves a dumped dataset, and /__truth gives back the same bytes', async () => {
    const dir = join(tmp, 'a');
    const devnet = await spawnDevnet(['--dataset', dir]);
    try {
      for (const file of files) {
        const served = Buffer.from(await (await fetch(`${devnet.origin}/__truth/${file}`)).arrayBuffer());
        expect(served.equals(readFileSync(join(dir, file))), file).toBe(true);
      }
    } finally {
      devnet.child.kill('SIGTERM');
      await collect(devnet.child, 10_000);
    }
  });
});
