import { createServer, type Server } from 'node:http';

/**
 * An HTTP proxy for a test: each request's body is read whole and given to `route`, which names the origin to forward
 * it to (its answer goes back as it came), or undefined to leave it unanswered, its connection open, as a node that
 * hangs on it would.
 *
 * @example const proxy = await routingProxy((body) => (body.includes('"eth_chainId"') ? other.origin : devnet.origin));
 * // point the exporter at `${proxy.origin}/${PROJECT}`; await proxy.close();
 */
export async function routingProxy(route: (body: string) => string | undefined): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const origin = route(body.toString());
      if (origin === undefined) return;
      fetch(`${origin}${req.url}`, { method: req.method!, headers: { 'content-type': 'application/json' }, ...(body.length && { body }) }).then(
        async (answer) => {
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
          res.end(Buffer.from(await answer.arrayBuffer()));
        },
        () => res.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
