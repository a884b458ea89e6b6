import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/common/clock.ts';
import { createSourceCounters } from '../src/common/source-counters.ts';
import { parseApiUrl } from '../src/config/api-url.ts';
import { createHttpClient } from '../src/source/http-client.ts';
import { waitFor } from './helpers/chaos.ts';

// A run's stop (Ctrl-C) reaches its HTTP client: requests on their way end at once with the stop's reason, nothing is
// sent after it, and a request that ended leaves no listener behind on the stop's signal, which lives for the whole run.

let server: Server;
let base: string;
let received = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    received++;
    // /hang is read and never answered, as a node that hangs
    if (req.url?.startsWith('/api/hang')) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const client = (stop: AbortSignal) =>
  createHttpClient({
    endpoint: parseApiUrl(base),
    config: { timeoutMs: 60_000, connections: 4, maxResponseBytes: 1 << 20, retries: 5 },
    logger: pino({ level: 'silent' }),
    clock: systemClock,
    counters: createSourceCounters(),
    stop,
  });

describe("an HTTP client given a run's stop", () => {
  it('leaves no listener on the stop once its requests have ended, and no leak warning for 20 at once', async () => {
    const stop = new AbortController();
    const http = client(stop.signal);
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => http.getJson('/ok')));
      expect(answers).toEqual(Array.from({ length: 20 }, () => ({ ok: true })));
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
      // a warning is emitted on the next tick
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
      await http.close();
    }
  });

  it('ends a request on its way with the stop’s reason at once, and sends nothing after it', async () => {
    const stop = new AbortController();
    const http = client(stop.signal);
    try {
      const before = received;
      const hanging = http.getJson('/hang').catch((err: unknown) => err);
      await waitFor(() => received > before, { what: 'the hanging request at the server' });
      expect(received).toBe(before + 1);
      const reason = new Error('stopped by SIGINT');
      const stoppedAt = performance.now();
      stop.abort(reason);
      expect(await hanging).toBe(reason);
      // at once: the request's 60 s deadline and its 5 retries are not waited for
      expect(performance.now() - stoppedAt).toBeLessThan(5_000);
      await expect(http.getJson('/ok')).rejects.toBe(reason);
      expect(received).toBe(before + 1);
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    } finally {
      await http.close();
    }
  });
});
