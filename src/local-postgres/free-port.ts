import { createServer } from 'node:net';

/**
 * A TCP port that nothing listens on right now: listens on port 0, reads the port the OS chose, closes.
 * Another process may still take it before you do, so a caller that binds later should be ready to retry.
 *
 * @example const port = await freePort(); // e.g. 41873
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : undefined;
      server.close((err) => {
        if (err) reject(err);
        else if (port === undefined) reject(new Error(`Could not read the port chosen on ${host}: try again.`));
        else resolve(port);
      });
    });
  });
}
