import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import { FatalError } from '../common/errors.ts';

const run = promisify(execFile);

/** The account a local PostgreSQL server runs as, when this process is root. */
export interface ServerUser {
  name: string;
  uid: number;
  gid: number;
}

const SERVER_USER_NAME = 'postgres';

/**
 * PostgreSQL refuses to run as root. As root, the server runs as the `postgres` user, created (a system user
 * with no home and no login shell) when the machine has none, as a bare container usually does.
 */
export async function serverUser(logger?: Logger): Promise<ServerUser> {
  const found = await lookUp(SERVER_USER_NAME);
  if (found) return found;
  const attempts: string[][] = [
    ['useradd', '--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', SERVER_USER_NAME],
    ['adduser', '-S', '-D', '-H', SERVER_USER_NAME], // BusyBox (Alpine)
  ];
  const failures: string[] = [];
  for (const [command, ...args] of attempts) {
    try {
      await run(command!, args);
      const made = await lookUp(SERVER_USER_NAME);
      if (made) {
        logger?.info({ msg: 'created a system user for PostgreSQL, which may not run as root', user: SERVER_USER_NAME, uid: made.uid });
        return made;
      }
    } catch (err) {
      failures.push(`${command}: ${firstLine(err)}`);
    }
  }
  throw new FatalError(
    `PostgreSQL may not run as root, and there is no "${SERVER_USER_NAME}" user to run it as; creating one failed:\n  ${failures.join('\n  ')}\n` +
      `Create a system user named ${SERVER_USER_NAME} and run again, or run as an ordinary user.`,
  );
}

async function lookUp(name: string): Promise<ServerUser | undefined> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
    return { name, uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
  } catch {
    return undefined;
  }
}

function firstLine(err: unknown): string {
  const text = (err as { stderr?: string }).stderr?.trim() || (err instanceof Error ? err.message : String(err));
  return text.split('\n')[0] ?? text;
}
