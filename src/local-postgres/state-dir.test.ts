import { describe, expect, it } from 'vitest';
import { stateDirFor } from './state-dir.ts';

describe('stateDirFor', () => {
  it('keeps an ordinary user’s state in the project’s .data folder', () => {
    expect(stateDirFor({ projectDir: '/home/ana/erc20-etl', asRoot: false, tmpDir: '/tmp' })).toBe('/home/ana/erc20-etl/.data');
  });

  it('puts root’s state in the temporary folder, one folder per clone, named after it', () => {
    const a = stateDirFor({ projectDir: '/root/erc20-etl', asRoot: true, tmpDir: '/tmp' });
    const b = stateDirFor({ projectDir: '/root/other/erc20-etl', asRoot: true, tmpDir: '/tmp' });
    expect(a).toMatch(/^\/tmp\/erc20-etl-root\/erc20-etl-[0-9a-f]{16}$/);
    expect(b).toMatch(/^\/tmp\/erc20-etl-root\/erc20-etl-[0-9a-f]{16}$/);
    expect(a).not.toBe(b);
    expect(stateDirFor({ projectDir: '/root/erc20-etl/', asRoot: true, tmpDir: '/tmp' })).toBe(a);
  });

  it('names a clone whose path has spaces and other characters with a plain folder name', () => {
    const dir = stateDirFor({ projectDir: '/tmp/tmp.X1/my project (copy)', asRoot: true, tmpDir: '/var/tmp' });
    expect(dir).toMatch(/^\/var\/tmp\/erc20-etl-root\/my_project_copy_-[0-9a-f]{16}$/);
  });
});
