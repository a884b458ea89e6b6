import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, REPO_DIR, runCli, type CliResult } from './helpers/cli.ts';

/** Starts a small `erc20-etl devnet` with stderr on a pipe, stops it with SIGTERM once it listens, and returns its output. */
function devnetRun(env: NodeJS.ProcessEnv): Promise<CliResult> {
  const args = ['devnet', '--port', '0', '--blocks', '20', '--transfers', '10', '--tokens', '1'];
  const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_DIR, env: { ...process.env, ...env }, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (/listening on/.test(stdout)) child.kill('SIGTERM');
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`devnet did not stop in time\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 30_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const lines = (text: string) => text.split('\n').filter((line) => line !== '');

describe('log lines on stderr', () => {
  it('are JSON lines when stderr is a pipe, as under cron', async () => {
    const r = await devnetRun({ LOG_FORMAT: '', CI: '' });
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr).length).toBeGreaterThan(0);
    const logs = lines(r.stderr).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logs).toContainEqual(expect.objectContaining({ level: 30, name: 'devnet', msg: 'devnet stopping', signal: 'SIGTERM' }));
  });

  it('are readable text with LOG_FORMAT=pretty, even on a pipe', async () => {
    const r = await devnetRun({ LOG_FORMAT: 'pretty' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(devnet\): devnet stopping\n {4}signal: "SIGTERM"$/m);
    expect(r.stderr).not.toMatch(/"level":/);
    expect(r.stderr).not.toContain('\u001b['); // no colours on a pipe
  });

  it('refuse an unknown LOG_FORMAT with exit 2, naming the variable and the accepted values', async () => {
    const r = await runCli(['devnet', '--port', '0'], { env: { LOG_FORMAT: 'xml' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/LOG_FORMAT is "xml": expected json .* or pretty /);
  });

  it("write Node's own warnings as log lines: pg's notice on sslmode=require is one JSON line, not text of several", async () => {
    const r = await runCli(['status', '--database-url', 'postgres://nobody:pw@127.0.0.1:1/x?sslmode=require'], { env: { LOG_FORMAT: 'json' } });
    expect(r.code, r.stderr).toBe(1);
    const lines = r.stderr.split('\n').filter(Boolean);
    const warning = lines.find((line) => line.includes('SECURITY WARNING'));
    expect(warning).toBeDefined();
    expect(JSON.parse(warning!)).toMatchObject({ level: 40, msg: expect.stringMatching(/^SECURITY WARNING: The SSL modes .*verify-full/s), warning: 'Warning' });
    // every other line is JSON too, but the command's last word
    expect(lines.filter((line) => !line.startsWith('{'))).toEqual([expect.stringMatching(/^erc20-etl: Cannot reach the database/)]);
    // NODE_NO_WARNINGS=1 keeps them quiet, as Node does
    const quiet = await runCli(['status', '--database-url', 'postgres://nobody:pw@127.0.0.1:1/x?sslmode=require'], { env: { LOG_FORMAT: 'json', NODE_NO_WARNINGS: '1' } });
    expect(quiet.code, quiet.stderr).toBe(1);
    expect(quiet.stderr).not.toContain('SECURITY WARNING');
  });

  it('refuse an unknown LOG_LEVEL with exit 2 and one line naming the levels, not a stack trace', async () => {
    for (const args of [
      ['devnet', '--port', '0'],
      ['status', '--database-url', 'postgres://nobody@127.0.0.1:1/x'],
    ]) {
      const r = await runCli(args, { env: { LOG_LEVEL: 'verbose' } });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('LOG_LEVEL is "verbose": expected one of fatal, error, warn, info, debug, trace, silent');
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
