import { createServer, connect, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a PostgreSQL server that loses answers: a connection whose statement matches one of `rules`
 * (the SQL of a simple or extended-protocol query, as PostgreSQL receives it) is cut when the server says the work is
 * done (ReadyForQuery, idle: an autocommit statement ended, or its transaction's COMMIT did), before the client hears
 * it. So the work is committed while the client sees its connection lost, as when a network drops at that moment.
 * Each rule fires once, on the first connection that reaches that point; `fired` lists the rules that did.
 *
 * With `strand`, the connection is cut when the matching statement is done inside its transaction (ReadyForQuery, in
 * a transaction), and on the client's side only: the server's backend lives on, its transaction open and its locks
 * held, as when a network drops one way; its COMMIT never comes. Its socket is closed by `close()`.
 *
 * Plain connections only: a client asking for SSL is refused it (the test servers have none).
 *
 * @example const proxy = await losingProxy(url, [/insert into "export_runs"/]); // run against proxy.url; proxy.fired → ['insert into "export_runs"']
 */
export async function losingProxy(
  databaseUrl: string,
  rules: readonly RegExp[],
  options: { strand?: boolean } = {},
): Promise<{ url: string; fired: string[]; close(): Promise<void> }> {
  const target = new URL(databaseUrl);
  const fired: string[] = [];
  const pending = new Set(rules);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let armed: RegExp | undefined;
    // stranded: the client's side cut, the server's kept open (until close()) with its transaction
    let stranded = false;
    const cut = () => {
      client.destroy();
      if (!stranded) upstream.destroy();
    };
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
    // client → server: the startup message has no type byte; then typed messages
    const fromClient = messages(true, (type, body, raw) => {
      if (type === 0 && body.readInt32BE(0) === 80877103) {
        client.write('N'); // SSLRequest: no SSL here
        return;
      }
      if (!armed && (type === 0x51 /* Q */ || type === 0x50) /* P */) {
        const text = type === 0x51 ? body.toString('utf8', 0, body.length - 1) : body.toString('utf8', body.indexOf(0) + 1, body.indexOf(0, body.indexOf(0) + 1));
        armed = [...pending].find((rule) => rule.test(text));
        if (armed) pending.delete(armed);
      }
      upstream.write(raw);
    });
    // server → client: every message passes until an armed connection's work is done
    const fromServer = messages(false, (type, body, raw) => {
      if (armed && type === 0x5a /* Z */ && body[0] === (options.strand ? 0x54 /* T */ : 0x49) /* I */) {
        fired.push(armed.source);
        stranded = options.strand === true;
        armed = undefined;
        cut();
        return;
      }
      if (stranded) return;
      if (!client.destroyed) client.write(raw);
    });
    client.on('data', fromClient);
    upstream.on('data', fromServer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.toString(),
    fired,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Splits a byte stream into PostgreSQL protocol messages: `onMessage(type, body, raw)` for each whole one, `type` 0 for
 * the untyped first message of a client (`startup`).
 */
function messages(startup: boolean, onMessage: (type: number, body: Buffer, raw: Buffer) => void): (data: Buffer) => void {
  let buffered = Buffer.alloc(0);
  let untyped = startup;
  return (data) => {
    buffered = Buffer.concat([buffered, data]);
    for (;;) {
      const head = untyped ? 0 : 1;
      if (buffered.length < head + 4) return;
      const length = buffered.readInt32BE(head);
      if (buffered.length < head + length) return;
      const raw = buffered.subarray(0, head + length);
      buffered = buffered.subarray(head + length);
      const type = untyped ? 0 : raw[0]!;
      // an SSLRequest is followed by the real startup message, untyped too
      const stillUntyped = untyped && raw.length === 8 && raw.readInt32BE(4) === 80877103;
      onMessage(type, raw.subarray(head + 4), raw);
      untyped = stillUntyped;
    }
  };
}
