import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  /** `http://host:port/metrics` */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `registry` at `GET /metrics` in Prometheus' text format; anything else is a 404. Port 0 picks a
 * free one (see `url`).
 *
 * @example const server = await startMetricsServer({ registry, host: '127.0.0.1', port: 9464 }); server.url // → 'http://127.0.0.1:9464/metrics'
 */
export async function startMetricsServer(options: { registry: Registry; host: string; port: number }): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('erc20-etl serves its metrics at GET /metrics\n');
      return;
    }
    options.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(err as Error).message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
