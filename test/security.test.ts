import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { parseAst } from 'rolldown/parseAst';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { systemClock } from '../src/common/clock.ts';
import type { Dataset } from '../src/dataset/types.ts';
import { generateSyntheticDataset } from '../src/devnet/synthetic.ts';
import { parseApiUrl } from '../src/config/api-url.ts';
import { createSourceCounters } from '../src/common/source-counters.ts';
import { TlsError } from '../src/source/errors.ts';
import { createHttpClient } from '../src/source/http-client.ts';
import { createWarehouse } from '../src/warehouse/db.ts';
import { BIN, collect, REPO_DIR, runCli, type CliResult } from './helpers/cli.ts';
import { recordFigures } from './helpers/figures.ts';
import { databaseName, databaseUrl } from './helpers/database.ts';
import { startDevnet, type RunningDevnet } from './helpers/devnet.ts';
import { datasetTransfers, migratedWarehouse, warehouseTransfers } from './helpers/exporter.ts';

/**
 * The project id never leaves the process (logs, errors, the warehouse, the process title); SQL text never
 * holds a value; TLS certificates are always verified; and the exporter runs with the privileges README grants.
 */

const SECRET = 'proj-SECRET-7e3a';
const tmp = await mkdtemp(join(tmpdir(), 'erc20-etl-security-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));

const figures: Record<string, unknown> = {};
afterAll(() => recordFigures('security', figures));

let dataset: Dataset;
beforeAll(() => {
  dataset = generateSyntheticDataset({ seed: 44, blocks: 300, tokens: 3, transfers: 2000, startBlock: 700 });
});
const contracts = () => [...new Set(dataset.transfers.map((t) => t.contractAddress))].sort();

/** Where the project id could show up, as text, with what it came from. */
type Haystack = { where: string; text: string }[];
const leaks = (haystack: Haystack) => haystack.filter((h) => /proj-secret-7e3a/i.test(h.text) || h.text.includes(encodeURIComponent(SECRET))).map((h) => h.where);

describe('the project id', () => {
  let devnet: RunningDevnet;
  let quota: RunningDevnet;
  let echo: Server;
  let echoOrigin: string;
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    // a fault on every path that builds a message: 5xx, resets, cut bodies, lagging headers
    devnet = await startDevnet(dataset, {
      projectIds: [SECRET],
      faults: { latencyMs: [5, 5], failRate: 0.08, resetRate: 0.03, truncateRate: 0.03, headerLagRate: 0.1 },
    });
    quota = await startDevnet(dataset, { projectIds: [SECRET], quota: 6 });
    // an API that repeats the URL it was asked in its error message, as some providers do
    echo = createHttpServer((req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      const message = `unknown project id in ${req.url}`;
      res.end(JSON.stringify(req.method === 'POST' ? { jsonrpc: '2.0', id: 1, error: { code: -32099, message } } : { error: { code: 'unauthorized', message } }));
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    echoOrigin = `http://127.0.0.1:${(echo.address() as { port: number }).port}`;
    target = await migratedWarehouse('security_secret');
  });
  afterAll(async () => {
    await target?.drop();
    await devnet?.close();
    await quota?.close();
    await new Promise((r) => echo?.close(r));
  });

  it('appears in no output, log line, error, ledger row, table row, session or process title of succeeding and failing runs', async () => {
    const file = join(tmp, 'secret-job.json');
    await writeFile(
      file,
      JSON.stringify({ name: 'secret-job', contracts: contracts().map((address) => ({ address, fromBlock: 700, toBlock: 999 })), pageSize: 40, concurrency: 2 }),
    );
    const env = { LOG_LEVEL: 'debug', DATABASE_URL: target.url };
    const backfill = ['backfill', ...contracts().flatMap((c) => ['--contract', c]), '--from', '700', '--to', '999', '--page-size', '50'];
    const cases: { name: string; run: () => Promise<Observed> }[] = [
      { name: 'backfill succeeds, URL in CHAIN_API_URL, faults on', run: () => observe(backfill, { ...env, CHAIN_API_URL: `${devnet.origin}/${SECRET}` }, target.url) },
      { name: 'run succeeds, URL in --api-url', run: () => observe(['run', file, '--api-url', `${devnet.origin}/${SECRET}`], env, target.url) },
      { name: 'status with the chain head, URL in CHAIN_API_URL', run: () => observe(['status'], { ...env, CHAIN_API_URL: `${devnet.origin}/${SECRET}` }, target.url) },
      { name: 'run fails: 403 after the plan quota, URL in --api-url', run: () => observe(['run', file, '--api-url', `${quota.origin}/${SECRET}`], env, target.url) },
      {
        name: 'backfill fails: 401 whose message repeats the URL, URL in CHAIN_API_URL',
        run: () => observe(backfill, { ...env, CHAIN_API_URL: `${echoOrigin}/${SECRET}` }, target.url),
      },
      // (`status` takes no --api-url: the head comes from CHAIN_API_URL only)
      {
        name: 'status cannot read the head: 401 repeating the URL, URL in CHAIN_API_URL',
        run: () => observe(['status'], { ...env, CHAIN_API_URL: `${echoOrigin}/${SECRET}` }, target.url),
      },
    ];
    const haystack: Haystack = [];
    const outcomes: Record<string, unknown>[] = [];
    for (const c of cases) {
      const o = await c.run();
      outcomes.push({ case: c.name, exit: o.result.code, procSamples: o.proc.length, cmdlineExposedAtStartMs: o.exposedUntilMs, sessionsSampled: o.sessions.length });
      haystack.push({ where: `${c.name}: stdout`, text: o.result.stdout }, { where: `${c.name}: stderr`, text: o.result.stderr });
      // /proc once the process has started: from then on its title has replaced the command line
      const started = o.proc.filter((p) => p.afterStart);
      haystack.push(...started.map((p) => ({ where: `${c.name}: /proc at ${p.ms} ms`, text: p.text })));
      haystack.push(...o.sessions.map((s) => ({ where: `${c.name}: pg_stat_activity`, text: s })));
      expect(started.length, `${c.name}: /proc was read while the process ran`).toBeGreaterThan(0);
      // the canary: the same reads find the id in the process's environment, so they would find a leak
      expect(
        o.proc.some((p) => /proj-SECRET-7e3a/.test(p.raw)),
        `${c.name}: the canary in its environ was read, so the reads would find a leak`,
      ).toBe(true);
    }
    haystack.push(...(await everyRowAsText(target.url)));
    figures['projectId'] = { cases: outcomes, placesSearched: haystack.length, leaks: leaks(haystack) };

    expect(outcomes.map((o) => o.exit)).toEqual([0, 0, 0, 1, 1, 0]);
    const runs = await target.warehouse.db.selectFrom('export_runs').select(['status', 'error']).orderBy('id').execute();
    expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'failed', 'failed']);
    expect(runs[2]!.error).toMatch(/<redacted>.*HTTP 403 forbidden/s);
    expect(runs[3]!.error).toMatch(/HTTP 401 -32099 "unknown project id in \/<redacted>"/);
    expect(
      haystack.find((h) => h.where.endsWith('stderr') && /"msg":"chain API request failed, retrying"/.test(h.text)),
      'faults made the runs log retries',
    ).toBeDefined();
    const said = (name: string) => haystack.find((h) => h.where === `${name}: stderr`)?.text ?? '';
    expect(said('status cannot read the head: 401 repeating the URL, URL in CHAIN_API_URL')).toMatch(
      /could not read the chain head or its chain id \(eth_blockNumber, eth_chainId\); lag unknown.*unknown project id in \/<redacted>/,
    );
    // the lag line says the endpoint did not answer, not to set what is set
    const shown = haystack.find((h) => h.where === 'status cannot read the head: 401 repeating the URL, URL in CHAIN_API_URL: stdout')?.text ?? '';
    expect(shown).toContain('lag:         unknown (CHAIN_API_URL did not answer eth_blockNumber and eth_chainId: see the warning above)');
    expect(shown).not.toContain('set CHAIN_API_URL');
    expect(leaks(haystack)).toEqual([]);
  }, 300_000);
});

describe("a node's key", () => {
  const KEY = 'nodeKEY-5b1f9c27d4e8a063';
  const USER = 'reader';
  const BASIC = Buffer.from(`${USER}:${KEY}`).toString('base64');
  let node: Server;
  let port = 0;
  let target: Awaited<ReturnType<typeof migratedWarehouse>>;
  beforeAll(async () => {
    // a node that answers its chain id, and refuses everything else in a 200 answer whose message repeats the path,
    // query and Authorization header it was asked with, as some providers do, padded so that a message shortened to
    // 80 characters cuts through the key
    node = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const calls = JSON.parse(body) as { id: number; method: string } | { id: number; method: string }[];
        const answer = (c: { id: number; method: string }) =>
          c.method === 'eth_chainId'
            ? { jsonrpc: '2.0', id: c.id, result: '0x1' }
            : {
                jsonrpc: '2.0',
                id: c.id,
                error: { code: -32602, message: `invalid key ${'.'.repeat(40)} ${req.url} auth ${req.headers.authorization ?? 'none'}`, data: `${req.url}` },
              };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(Array.isArray(calls) ? calls.map(answer) : answer(calls)));
      });
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    port = (node.address() as { port: number }).port;
    target = await migratedWarehouse('security_node_key');
  });
  afterAll(async () => {
    await target?.drop();
    await new Promise((r) => node?.close(r));
  });

  it('is redacted from a provider’s error that repeats it, before the message is shortened: in the output, the logs and the ledger', async () => {
    const urls = [`http://127.0.0.1:${port}/v3/${KEY}`, `http://127.0.0.1:${port}/rpc?apikey=${KEY}`, `http://${USER}:${KEY}@127.0.0.1:${port}/rpc`];
    const haystack: Haystack = [];
    for (const url of urls) {
      const r = await runCli(['backfill', '--source', 'node', '--chain', '1', '--contract', contracts()[0]!, '--from', '700', '--to', '710'], {
        env: { LOG_LEVEL: 'debug', DATABASE_URL: target.url, CHAIN_API_URL: url },
      });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/JSON-RPC error -32602 "invalid key/);
      haystack.push({ where: `${url.replace(KEY, 'KEY')}: stdout`, text: r.stdout }, { where: `${url.replace(KEY, 'KEY')}: stderr`, text: r.stderr });
    }
    haystack.push(...(await everyRowAsText(target.url)));
    // any eight characters of the key, or of the Basic credential, in a row
    const pieces = [KEY, BASIC].flatMap((secret) => Array.from({ length: secret.length - 7 }, (_, i) => secret.slice(i, i + 8)));
    const found = haystack.filter((h) => pieces.some((p) => h.text.includes(p))).map((h) => h.where);
    expect(found).toEqual([]);
    expect(haystack.some((h) => h.text.includes('<redacted>'))).toBe(true);
  }, 120_000);
});

interface Observed {
  result: CliResult;
  /** /proc/<pid>/cmdline, comm and every thread's comm, read while it ran; `raw` adds environ (the canary). */
  proc: { ms: number; afterStart: boolean; text: string; raw: string }[];
  /** How long after the spawn the command line still showed the id (the window before the process title is set). */
  exposedUntilMs: number | null;
  sessions: string[];
}

/** Runs the CLI and reads /proc and pg_stat_activity every few ms while it runs. */
async function observe(args: string[], env: NodeJS.ProcessEnv, url: string): Promise<Observed> {
  const admin = new pg.Client({ connectionString: url, application_name: 'security-test' });
  admin.on('error', () => undefined);
  await admin.connect();
  const t0 = performance.now();
  // the canary: an unrelated variable holding the id, so a read of the right process's environ must find it
  const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_DIR, env: { ...process.env, ...env, SECURITY_TEST_CANARY: SECRET } });
  const pid = child.pid!;
  let firstLog = false;
  child.stderr.on('data', () => (firstLog = true));
  const done = collect(child, 180_000);
  let running = true;
  void done.finally(() => (running = false));
  const proc: Observed['proc'] = [];
  const sessions: string[] = [];
  let exposedUntilMs: number | null = null;
  try {
    for (let i = 0; running; i++) {
      const ms = Math.round(performance.now() - t0);
      const read = (f: string) => readFile(`/proc/${pid}/${f}`, 'utf8').catch(() => '');
      const threads = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
      const text = [await read('cmdline'), await read('comm'), ...(await Promise.all(threads.map((t) => read(`task/${t}/comm`))))].join('\n').replaceAll('\0', ' ');
      const raw = `${text}\n${await read('environ')}`;
      if (!raw.trim()) break; // gone
      if (/proj-SECRET-7e3a/.test(text)) exposedUntilMs = ms;
      // the process has started once it logs, or once its title replaced `node …/erc20-etl.js …`
      const titled = text.trim() !== '' && !text.includes('erc20-etl.js');
      proc.push({ ms, afterStart: firstLog || titled, text, raw });
      if (i % 5 === 0) {
        const { rows } = await admin.query<{ a: string }>(`SELECT a::text AS a FROM pg_stat_activity a WHERE datname = current_database() AND application_name <> 'security-test'`);
        sessions.push(...rows.map((r) => r.a));
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    await admin.end().catch(() => undefined);
  }
  return { result: await done, proc, exposedUntilMs, sessions };
}

/** Every row of every table and view of the public schema, as text. */
async function everyRowAsText(url: string): Promise<Haystack> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows: tables } = await client.query<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`);
    expect(tables.map((t) => t.name)).toContain('export_runs');
    const out: Haystack = [];
    for (const { name } of tables) {
      const { rows } = await client.query<{ t: string }>(`SELECT t::text AS t FROM ${client.escapeIdentifier(name)} t`);
      out.push(...rows.map((r, i) => ({ where: `table ${name} row ${i}`, text: r.t })));
    }
    return out;
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// SQL text: every value goes in as a parameter

type AstNode = { type: string; start: number; end: number; [key: string]: unknown };
interface SourceModule {
  file: string;
  source: string;
  ast: AstNode;
  parents: Map<AstNode, AstNode>;
}

const isNode = (v: unknown): v is AstNode => typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';
const children = (n: AstNode): AstNode[] => Object.entries(n).flatMap(([k, v]) => (k === 'parent' ? [] : Array.isArray(v) ? v.filter(isNode) : isNode(v) ? [v] : []));
const FUNCTION_TYPES = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);
/** Array and string methods whose result is built only from their receiver and arguments. */
const PURE_METHODS = new Set([
  'map',
  'flatMap',
  'filter',
  'join',
  'slice',
  'concat',
  'toLowerCase',
  'toUpperCase',
  'trim',
  'replace',
  'replaceAll',
  'split',
  'at',
  'repeat',
  'padStart',
  'padEnd',
  'toString',
  'find',
  'some',
  'every',
  'includes',
]);
/** Callbacks of these methods decide which elements stay, not the text: their result never reaches the SQL. */
const PREDICATE_METHODS = new Set(['filter', 'find', 'some', 'every']);
/** Kysely's `sql.…` helpers that put their argument into the SQL text itself. */
const SQL_TEXT_HELPERS = new Set(['raw', 'lit', 'id', 'ref', 'table']);

function parseModules(files: { file: string; source: string }[]): Map<string, SourceModule> {
  const modules = new Map<string, SourceModule>();
  for (const { file, source } of files) {
    const ast = parseAst(source, { lang: 'ts' }, file) as unknown as AstNode;
    const parents = new Map<AstNode, AstNode>();
    const walk = (n: AstNode) => {
      for (const c of children(n)) {
        parents.set(c, n);
        walk(c);
      }
    };
    walk(ast);
    modules.set(file, { file, source, ast, parents });
  }
  return modules;
}

/** `n` and everything under it; with `skipFunctions`, nested functions are yielded but not entered. */
function* nodesOf(n: AstNode, skipFunctions = false): Generator<AstNode> {
  yield n;
  for (const c of children(n)) {
    if (skipFunctions && FUNCTION_TYPES.has(c.type)) yield c;
    else yield* nodesOf(c, skipFunctions);
  }
}

type Binding =
  | { kind: 'const'; init: AstNode; mod: SourceModule }
  | { kind: 'param'; fn: AstNode; index: number; fallback?: AstNode; mod: SourceModule }
  | { kind: 'forOf'; iterable: AstNode; mod: SourceModule }
  | { kind: 'function'; fn: AstNode; mod: SourceModule }
  | { kind: 'import'; from: string; name: string; mod: SourceModule }
  | { kind: 'opaque' };

const idName = (n: unknown) => (isNode(n) && n.type === 'Identifier' ? (n['name'] as string) : undefined);

function declarationIn(statements: AstNode[], name: string, mod: SourceModule): Binding | undefined {
  for (const s of statements) {
    const d = s.type === 'ExportNamedDeclaration' && isNode(s['declaration']) ? s['declaration'] : s;
    if (d.type === 'FunctionDeclaration' && idName(d['id']) === name) return { kind: 'function', fn: d, mod };
    if (d.type === 'VariableDeclaration') {
      for (const v of d['declarations'] as AstNode[]) {
        if (idName(v['id']) !== name) continue;
        const init = v['init'] as AstNode | null;
        if (d['kind'] !== 'const' || !init) return { kind: 'opaque' };
        return FUNCTION_TYPES.has(init.type) ? { kind: 'function', fn: init, mod } : { kind: 'const', init, mod };
      }
    }
    if (d.type === 'ImportDeclaration') {
      for (const sp of d['specifiers'] as AstNode[]) {
        if (idName(sp['local']) !== name) continue;
        const from = (d['source'] as AstNode)['value'] as string;
        const imported = sp.type === 'ImportSpecifier' ? (idName(sp['imported']) ?? name) : 'default';
        return { kind: 'import', from: from.startsWith('.') ? resolve(dirname(mod.file), from) : from, name: imported, mod };
      }
    }
  }
  return undefined;
}

function resolveName(name: string, at: AstNode, mod: SourceModule): Binding | undefined {
  for (let n: AstNode | undefined = mod.parents.get(at); n; n = mod.parents.get(n)) {
    if (FUNCTION_TYPES.has(n.type)) {
      const params = n['params'] as AstNode[];
      for (const [index, p] of params.entries()) {
        if (idName(p) === name) return { kind: 'param', fn: n, index, mod };
        if (p.type === 'AssignmentPattern' && idName(p['left']) === name) return { kind: 'param', fn: n, index, fallback: p['right'] as AstNode, mod };
        if ([...nodesOf(p)].some((x) => x.type === 'Identifier' && x['name'] === name)) return { kind: 'opaque' };
      }
      const body = n['body'] as AstNode;
      if (body.type === 'BlockStatement') {
        const own = [...nodesOf(body, true)].filter((x) => x.type === 'VariableDeclaration' || x.type === 'FunctionDeclaration');
        const found = declarationIn(own, name, mod);
        if (found) return found;
      }
    }
    if (n.type === 'ForOfStatement' && (n['left'] as AstNode).type === 'VariableDeclaration') {
      const decl = ((n['left'] as AstNode)['declarations'] as AstNode[])[0];
      if (decl && idName(decl['id']) === name) return { kind: 'forOf', iterable: n['right'] as AstNode, mod };
    }
    if (n.type === 'Program') return declarationIn(n['body'] as AstNode[], name, mod);
  }
  return undefined;
}

/** Finds what an import names in another scanned module (its own top-level declaration). */
function followImport(b: Binding, modules: Map<string, SourceModule>): Binding | undefined {
  if (b.kind !== 'import') return b;
  const target = modules.get(b.from);
  return target ? declarationIn(target.ast['body'] as AstNode[], b.name, target) : undefined;
}

/**
 * Whether an expression is SQL the code wrote: literals, and constants, parameters and calls built only from
 * literals. A function parameter counts when every call of that function in the scanned code passes such a value.
 */
function createStaticCheck(modules: Map<string, SourceModule>) {
  const assumed = new Set<AstNode>(); // functions being evaluated for a call with static arguments
  const visiting = new Set<string>();

  function isStatic(n: AstNode | null | undefined, mod: SourceModule): boolean {
    if (!n) return false;
    const key = `${mod.file}:${n.start}:${n.end}:${n.type}`;
    if (visiting.has(key)) return false;
    visiting.add(key);
    try {
      return check(n, mod);
    } finally {
      visiting.delete(key);
    }
  }

  function check(n: AstNode, mod: SourceModule): boolean {
    switch (n.type) {
      case 'Literal':
        return true;
      case 'TemplateLiteral':
        return (n['expressions'] as AstNode[]).every((e) => isStatic(e, mod));
      case 'ParenthesizedExpression':
      case 'TSAsExpression':
      case 'TSSatisfiesExpression':
      case 'TSNonNullExpression':
      case 'TSTypeAssertion':
        return isStatic(n['expression'] as AstNode, mod);
      case 'ArrayExpression':
        return (n['elements'] as (AstNode | null)[]).every((e) => e !== null && isStatic(e.type === 'SpreadElement' ? (e['argument'] as AstNode) : e, mod));
      case 'ObjectExpression':
        // every value (and every computed key) static: `{ key: '$2', rows: '$5' }` handed to a builder of SQL
        return (n['properties'] as AstNode[]).every((p) =>
          p.type === 'SpreadElement' ? isStatic(p['argument'] as AstNode, mod) : (!p['computed'] || isStatic(p['key'] as AstNode, mod)) && isStatic(p['value'] as AstNode, mod),
        );
      case 'BinaryExpression':
      case 'LogicalExpression':
        return isStatic(n['left'] as AstNode, mod) && isStatic(n['right'] as AstNode, mod);
      case 'ConditionalExpression':
        return isStatic(n['consequent'] as AstNode, mod) && isStatic(n['alternate'] as AstNode, mod);
      case 'UnaryExpression':
        return isStatic(n['argument'] as AstNode, mod);
      case 'MemberExpression':
        return isStatic(n['object'] as AstNode, mod) && (!n['computed'] || isStatic(n['property'] as AstNode, mod));
      case 'Identifier':
        return n['name'] === 'undefined' || bindingStatic(resolveName(n['name'] as string, n, mod));
      case 'CallExpression':
        return sanitised(n, mod) || callStatic(n, mod);
      default:
        return false;
    }
  }

  function bindingStatic(b: Binding | undefined): boolean {
    const target = b && followImport(b, modules);
    if (!target) return false;
    switch (target.kind) {
      case 'const':
        return isStatic(target.init, target.mod);
      case 'forOf':
        return isStatic(target.iterable, target.mod);
      case 'param':
        return paramStatic(target);
      default:
        return false;
    }
  }

  /**
   * Text that cannot break out of an identifier, whatever went in: `x.replace(/[^a-z0-9]+/g, '_')` (a negated class of
   * letters, digits and `_` only), `randomBytes(n).toString('hex')`, and pg's `escapeIdentifier(x)` / `escapeLiteral(x)`.
   */
  function sanitised(n: AstNode, mod: SourceModule): boolean {
    const callee = n['callee'] as AstNode;
    if (callee.type !== 'MemberExpression' || callee['computed']) return false;
    const method = idName(callee['property']);
    const [first, second] = n['arguments'] as AstNode[];
    if (method === 'escapeIdentifier' || method === 'escapeLiteral') return true;
    if ((method === 'replace' || method === 'replaceAll') && first && second) {
      const regex = first['regex'] as { pattern: string; flags: string } | undefined;
      return (
        regex?.flags.includes('g') === true &&
        /^\[\^(?:a-z|A-Z|0-9|[A-Za-z0-9_])+\]\+?$/.test(regex.pattern) &&
        second.type === 'Literal' &&
        typeof second['value'] === 'string' &&
        /^[A-Za-z0-9_]*$/.test(second['value'])
      );
    }
    if (method === 'toString' && first?.type === 'Literal' && first['value'] === 'hex') {
      const receiver = callee['object'] as AstNode;
      const from = receiver.type === 'CallExpression' ? importedFrom(receiver['callee'] as AstNode, mod) : undefined;
      return idName(receiver['callee']) === 'randomBytes' && (from === 'node:crypto' || from === 'crypto');
    }
    return false;
  }

  function returnsStatic(fn: AstNode, mod: SourceModule): boolean {
    assumed.add(fn);
    try {
      const body = fn['body'] as AstNode;
      if (body.type !== 'BlockStatement') return isStatic(body, mod);
      const returns = [...nodesOf(body, true)].filter((x) => x.type === 'ReturnStatement');
      return returns.length > 0 && returns.every((r) => isStatic(r['argument'] as AstNode, mod));
    } finally {
      assumed.delete(fn);
    }
  }

  function callStatic(n: AstNode, mod: SourceModule): boolean {
    const callee = n['callee'] as AstNode;
    const args = n['arguments'] as AstNode[];
    if (callee.type === 'MemberExpression' && !callee['computed']) {
      const method = idName(callee['property']);
      if (!method || !PURE_METHODS.has(method) || !isStatic(callee['object'] as AstNode, mod)) return false;
      return args.every((a) => (FUNCTION_TYPES.has(a.type) ? PREDICATE_METHODS.has(method) || returnsStatic(a, mod) : isStatic(a, mod)));
    }
    const name = idName(callee);
    if (name === 'String' || name === 'Number') return args.every((a) => isStatic(a, mod));
    const b = name ? followImport(resolveName(name, n, mod) ?? { kind: 'opaque' }, modules) : undefined;
    return b?.kind === 'function' && args.every((a) => isStatic(a, mod)) && returnsStatic(b.fn, b.mod);
  }

  /** A parameter is static inside a call being evaluated, in a callback over a static array, or when every call site passes a static value. */
  function paramStatic(p: Extract<Binding, { kind: 'param' }>): boolean {
    if (assumed.has(p.fn)) return true;
    const parent = p.mod.parents.get(p.fn);
    if (parent?.type === 'CallExpression' && (parent['arguments'] as AstNode[]).includes(p.fn)) {
      const callee = parent['callee'] as AstNode;
      const method = callee.type === 'MemberExpression' ? idName(callee['property']) : undefined;
      return method !== undefined && PURE_METHODS.has(method) && isStatic(callee['object'] as AstNode, p.mod);
    }
    const sites = callSites(p.fn, p.mod);
    return (
      sites.length > 0 &&
      sites.every(({ call, mod }) => {
        const arg = (call['arguments'] as AstNode[])[p.index];
        return arg ? isStatic(arg, mod) : p.fallback !== undefined && isStatic(p.fallback, p.mod);
      })
    );
  }

  function callSites(fn: AstNode, fnMod: SourceModule): { call: AstNode; mod: SourceModule }[] {
    const out: { call: AstNode; mod: SourceModule }[] = [];
    for (const mod of modules.values()) {
      for (const call of nodesOf(mod.ast)) {
        const name = call.type === 'CallExpression' ? idName(call['callee']) : undefined;
        if (!name) continue;
        const b = followImport(resolveName(name, call, mod) ?? { kind: 'opaque' }, modules);
        if (b?.kind === 'function' && b.fn === fn && b.mod === fnMod) out.push({ call, mod });
      }
    }
    return out;
  }

  return isStatic;
}

interface SqlSink {
  file: string;
  line: number;
  what: string;
  code: string;
  ok: boolean;
}

/**
 * Every place where text becomes SQL: the query text of `.query(…)` (pg), the statement of a pg-copy-streams
 * `from(…)`/`to(…)`, and the arguments of kysely's `sql.raw/lit/id/ref/table(…)`. Kysely's `sql\`…\`` tag
 * needs no check: what it interpolates becomes a `$n` parameter.
 */
function sqlSinks(modules: Map<string, SourceModule>): SqlSink[] {
  const isStatic = createStaticCheck(modules);
  const sinks: SqlSink[] = [];
  for (const mod of modules.values()) {
    const line = (n: AstNode) => mod.source.slice(0, n.start).split('\n').length;
    const add = (what: string, n: AstNode | undefined) => {
      if (!n) return;
      sinks.push({ file: relative(REPO_DIR, mod.file), line: line(n), what, code: mod.source.slice(n.start, n.end).replace(/\s+/g, ' ').slice(0, 160), ok: isStatic(n, mod) });
    };
    for (const call of nodesOf(mod.ast)) {
      if (call.type !== 'CallExpression') continue;
      const callee = call['callee'] as AstNode;
      if (callee.type !== 'MemberExpression' || callee['computed']) continue;
      const method = idName(callee['property']);
      const args = call['arguments'] as AstNode[];
      const object = callee['object'] as AstNode;
      const from = importedFrom(object, mod);
      if (method === 'query') {
        const first = args[0];
        if (!first) continue;
        if (isCopyStream(first, mod)) continue; // its own sink, below
        if (first.type === 'ObjectExpression') {
          const text = (first['properties'] as AstNode[]).find((p) => idName(p['key']) === 'text');
          add('query({ text })', (text?.['value'] as AstNode | undefined) ?? first);
        } else add('query(text)', first);
      } else if (from === 'pg-copy-streams' && (method === 'from' || method === 'to')) {
        add(`pg-copy-streams ${method}(text)`, args[0]);
      } else if (from === 'kysely' && idName(object) === 'sql' && method && SQL_TEXT_HELPERS.has(method)) {
        for (const a of args) add(`sql.${method}(…)`, a);
      } else if (from === 'kysely' && idName(object) === 'CompiledQuery' && method === 'raw') {
        add('CompiledQuery.raw(text)', args[0]);
      }
    }
  }
  return sinks;
}

/** A pg-copy-streams stream: its `from(…)`/`to(…)` call, or a constant holding one (its statement is its own sink). */
function isCopyStream(n: AstNode, mod: SourceModule): boolean {
  if (n.type === 'Identifier') {
    const b = resolveName(idName(n)!, n, mod);
    return b?.kind === 'const' && isCopyStream(b.init, mod);
  }
  const callee = n.type === 'CallExpression' ? (n['callee'] as AstNode) : undefined;
  return callee?.type === 'MemberExpression' && importedFrom(callee['object'] as AstNode, mod) === 'pg-copy-streams';
}

/** The module an identifier is imported from, if it is an import. */
function importedFrom(n: AstNode, mod: SourceModule): string | undefined {
  const name = idName(n);
  const b = name ? resolveName(name, n, mod) : undefined;
  return b?.kind === 'import' ? b.from : undefined;
}

async function sourceFiles(dir: string): Promise<{ file: string; source: string }[]> {
  const out: { file: string; source: string }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    out.push({ file, source: await readFile(file, 'utf8') });
  }
  return out;
}

describe('SQL text', () => {
  it('the scan flags values spliced into SQL and passes SQL built only from constants', () => {
    const bad = parseModules([
      {
        file: '/virtual/users.ts',
        source: `
          import { sql } from 'kysely';
          export async function byName(client: any, name: string) { return client.query(\`SELECT * FROM users WHERE name = '\${name}'\`); }
          export function byId(pool: any, id: number) { return pool.query('SELECT * FROM users WHERE id = ' + id); }
          export function drop(db: any, table: string) { return sql\`DROP TABLE \${sql.raw(table)}\`.execute(db); }
          export function later(pool: any, input: string) { let where = input; const q = \`SELECT 1 WHERE \${where}\`; return pool.query(q); }
          export function handler(client: any, req: any) { return byName(client, req.query.name); }
          export function loose(c: any, label: string) { return c.query(\`CREATE DATABASE db_\${label.replace(/[^a-z0-9 ;']+/g, '_')}\`); }
          export function hexOfText(c: any, label: string) { return c.query(\`CREATE DATABASE db_\${label.toString('hex')}\`); }
          const WHERE = (o: { w: string }) => \`SELECT 1 WHERE \${o.w}\`;
          export function byObject(c: any, req: any) { return c.query(WHERE({ w: req.query.w })); }`,
      },
    ]);
    const good = parseModules([
      {
        file: '/virtual/cols.ts',
        source: `export const COLS = ['a', 'b'] as const;`,
      },
      {
        file: '/virtual/ok.ts',
        source: `
          import { randomBytes } from 'node:crypto';
          import { sql } from 'kysely';
          import { COLS } from './cols.ts';
          const TABLE = 'staging';
          const LIST = (alias: string) => \`(\${COLS.map((c) => \`\${alias}.\${c}\`).join(', ')})\`;
          const Q = \`SELECT \${LIST('t')} FROM \${TABLE} t WHERE id = $1\`;
          export function one(client: any, id: number) { return client.query(Q, [id]); }
          export function make(client: any, name: string) { return client.query(\`CREATE TEMP TABLE \${name} (a int)\`); }
          export function go(client: any) { return make(client, TABLE); }
          export function drops(db: any) { for (const t of ['a', 'b']) sql\`DROP TABLE \${sql.table(t)}\`.execute(db); }
          export function named(c: any, label: string) { return c.query(\`CREATE DATABASE db_\${label.replace(/[^a-z0-9]+/g, '_')}_\${randomBytes(4).toString('hex')}\`); }
          export function quoted(c: any, name: string) { return c.query(\`DROP TABLE \${c.escapeIdentifier(name)}\`); }
          const SET = (to: { key: string; n: string }, row = '') => { const same = \`\${row}k = \${to.key}\`; return \`k = \${to.key}, n = CASE WHEN \${same} THEN 0 ELSE \${to.n} END\`; };
          export function moved(c: any) { return c.query(\`UPDATE t SET \${SET({ key: '$1', n: '1' })}\`); }`,
      },
    ]);
    expect(sqlSinks(bad).map((s) => [s.line, s.ok])).toEqual([
      [3, false],
      [4, false],
      [5, false],
      [6, false],
      [8, false],
      [9, false],
      [11, false],
    ]);
    expect(sqlSinks(good).map((s) => s.ok)).toEqual([true, true, true, true, true, true]);
  });

  it('holds no value anywhere in src/ or migrations/: every value is a parameter', async () => {
    const files = [...(await sourceFiles(join(REPO_DIR, 'src'))), ...(await sourceFiles(join(REPO_DIR, 'migrations')))];
    const sinks = sqlSinks(parseModules(files));
    figures['sqlText'] = { filesScanned: files.length, sinks };
    // the scan does see the SQL text of the job lock, the page load, the COPY, the migration lock, the demo's database and the migrations
    expect([...new Set(sinks.map((s) => s.file))]).toEqual(
      expect.arrayContaining([
        'src/warehouse/job-lock.ts',
        'src/warehouse/load-page.ts',
        'src/warehouse/copy.ts',
        'src/warehouse/migrate.ts',
        'src/warehouse/databases.ts',
        'migrations/0001_initial.ts',
      ]),
    );
    expect(sinks.filter((s) => !s.ok)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// TLS

describe('TLS', () => {
  let server: ReturnType<typeof createHttpsServer>;
  let origin: string;
  let connections = 0;
  let requests = 0;
  beforeAll(async () => {
    const key = join(tmp, 'key.pem');
    const cert = join(tmp, 'cert.pem');
    // a self-signed certificate for 127.0.0.1 (the openssl command line; node:crypto cannot sign certificates)
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
      { stdio: 'ignore' },
    );
    server = createHttpsServer({ key: await readFile(key), cert: await readFile(cert) }, (_req, res) => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0x3e7' }));
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise((r) => server?.close(r)));

  it('the HTTP client refuses a self-signed certificate at the first attempt, without retrying', async () => {
    const before = connections;
    const counters = createSourceCounters();
    const http = createHttpClient({
      endpoint: parseApiUrl(`${origin}/${SECRET}`),
      config: { timeoutMs: 5_000, connections: 1, maxResponseBytes: 1 << 20, retries: 5, retryMinDelayMs: 50 },
      logger: pino({ level: 'silent' }),
      clock: systemClock,
      counters,
    });
    try {
      const err = await http.postJson({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TlsError);
      expect((err as Error).message).toMatch(/the TLS certificate of the API was refused \((?:DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)/);
      expect((err as Error).message).toContain(`${origin}/<redacted>`);
      expect((err as Error).message).not.toContain(SECRET);
      expect(counters).toMatchObject({ retries: 0, rpcPosts: 1, errors: { tls: 1 } });
      expect(connections - before).toBe(1);
      expect(requests).toBe(0);
    } finally {
      await http.close();
    }
  });

  it('the exporter refuses it even with NODE_TLS_REJECT_UNAUTHORIZED=0 in its environment', async () => {
    const target = await migratedWarehouse('security_tls');
    try {
      const before = connections;
      const r = await runCli(['backfill', '--contract', contracts()[0]!, '--from', '700', '--to', '999'], {
        env: { DATABASE_URL: target.url, CHAIN_API_URL: `${origin}/${SECRET}`, NODE_TLS_REJECT_UNAUTHORIZED: '0' },
      });
      figures['tls'] = {
        selfSignedWithNodeTlsRejectUnauthorized0: {
          exit: r.code,
          requestsServed: requests,
          connections: connections - before,
          said: r.stderr
            .trim()
            .split('\n')
            .filter((l) => !l.startsWith('{'))
            .slice(-2),
        },
      };
      expect(requests, 'the self-signed server answered requests of the exporter').toBe(0);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/the TLS certificate of the API was refused/);
      expect(connections - before).toBe(1);
    } finally {
      await target.drop();
    }
  });

  it('no option, flag or variable in src/ or bin/ turns verification off (only `rejectUnauthorized: true` is set)', async () => {
    const files = [...(await sourceFiles(join(REPO_DIR, 'src'))), { file: BIN, source: await readFile(BIN, 'utf8') }];
    const found = files.flatMap(({ file, source }) =>
      source
        .split('\n')
        .flatMap((text, i) =>
          /rejectUnauthorized\s*:(?!\s*true\b)|NODE_TLS_REJECT_UNAUTHORIZED\s*=|env\W+NODE_TLS_REJECT_UNAUTHORIZED|checkServerIdentity|insecure/i.test(text)
            ? [`${relative(REPO_DIR, file)}:${i + 1}: ${text.trim()}`]
            : [],
        ),
    );
    expect(found).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The privileges README grants

describe('the exporter role of README "Database privileges"', () => {
  const serverUrl = () => inject('databaseServerUrl');
  const suffix = randomBytes(4).toString('hex');
  const owner = `erc20_owner_${suffix}`;
  const exporter = `erc20_exporter_${suffix}`;
  const reader = `erc20_reader_${suffix}`;
  const database = databaseName('privileges', suffix);
  let devnet: RunningDevnet;
  beforeAll(async () => {
    devnet = await startDevnet(dataset, { projectIds: [SECRET] });
  });
  afterAll(async () => {
    await devnet?.close();
    await connectedAs(serverUrl(), async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      for (const role of [reader, exporter, owner]) await c.query(`DROP ROLE IF EXISTS ${role}`);
    });
  });

  it('can run backfill, status, enqueue and worker with exactly those grants, and cannot create, drop, truncate or migrate; a role that only reads sees status and is told what a run lacks', async () => {
    const readme = await readFile(join(REPO_DIR, 'README.md'), 'utf8');
    const section = /^### Database privileges\n([\s\S]*?)(?=^##)/m.exec(readme)?.[1];
    expect(section, 'README has a "### Database privileges" section').toBeDefined();
    const blocks = [...section!.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) =>
      m[1]!
        .replaceAll('erc20_owner', owner)
        .replaceAll('erc20_exporter', exporter)
        .replace(/\bDATABASE erc20\b/g, `DATABASE ${database}`),
    );
    expect(blocks).toHaveLength(2);
    const [asAdmin, asOwner] = blocks as [string, string];

    await connectedAs(serverUrl(), async (c) => {
      for (const statement of statements(asAdmin)) await c.query(statement);
    });
    const url = (role: string, password: string) => {
      const u = new URL(databaseUrl(serverUrl(), database));
      u.username = role;
      u.password = password;
      return u.toString();
    };
    const password = (role: string) => new RegExp(`CREATE ROLE ${role} LOGIN PASSWORD '([^']*)'`).exec(asAdmin)?.[1] ?? '';
    const ownerUrl = url(owner, password(owner));
    const exporterUrl = url(exporter, password(exporter));

    const migrated = await runCli(['migrate'], { env: { DATABASE_URL: ownerUrl } });
    expect(migrated.code, migrated.stderr).toBe(0);
    await connectedAs(ownerUrl, async (c) => {
      for (const statement of statements(asOwner)) await c.query(statement);
    });

    const env = { DATABASE_URL: exporterUrl, CHAIN_API_URL: `${devnet.origin}/${SECRET}` };
    const args = ['backfill', ...contracts().flatMap((c) => ['--contract', c]), '--from', '700', '--to', '999', '--page-size', '100'];
    const first = await runCli(args, { env });
    const again = await runCli(args, { env });
    const status = await runCli(['status', '--json'], { env });
    // the same blocks as a queued job, read by a worker: it goes through the queue's schema with these grants
    const jobDir = await mkdtemp(join(tmpdir(), 'erc20-etl-privileges-'));
    const jobFile = join(jobDir, 'queued.json');
    await writeFile(jobFile, JSON.stringify({ name: 'queued', contracts: contracts().map((address) => ({ address, fromBlock: 700, toBlock: 999 })), pageSize: 100 }));
    const enqueued = await runCli(['enqueue', jobFile], { env });
    const worker = await runCli(['worker', '--once', '--dead-after', '5'], { env });
    await rm(jobDir, { recursive: true, force: true });
    const migrateAsExporter = await runCli(['migrate'], { env: { DATABASE_URL: exporterUrl } });

    const refused: Record<string, string | null> = {};
    await connectedAs(exporterUrl, async (c) => {
      for (const statement of [
        'CREATE TABLE intruder (a int)',
        'DROP TABLE token_transfers',
        'TRUNCATE token_transfers',
        'ALTER TABLE token_transfers ADD COLUMN x int',
        'DELETE FROM token_transfers_removed',
        'UPDATE token_transfers_removed SET removed_by_run = 0',
        'DELETE FROM export_runs',
        'DELETE FROM export_coverage',
        'CREATE SCHEMA intruder',
      ]) {
        refused[statement] = await c.query(statement).then(
          () => null,
          (e: { code?: string }) => e.code ?? 'error',
        );
      }
    });
    const rows = await (async () => {
      const w = createWarehouse({ databaseUrl: ownerUrl, logger: pino({ level: 'silent' }), maxConnections: 1 });
      try {
        return await warehouseTransfers(w);
      } finally {
        await w.close();
      }
    })();
    figures['privileges'] = {
      grants: { asAdmin: statements(asAdmin), asOwner: statements(asOwner) },
      backfill: first.code,
      backfillAgain: again.code,
      status: status.code,
      enqueue: enqueued.code,
      worker: worker.code,
      migrateAsExporter: { exit: migrateAsExporter.code, said: migrateAsExporter.stderr.trim().split('\n').at(-1) },
      refused,
      rows: rows.length,
    };

    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/2000 inserted/);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/0 inserted, 0 updated, 2000 unchanged, 0 removed/);
    expect(status.code, status.stderr).toBe(0);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    expect(worker.code, worker.stderr).toBe(0);
    expect(worker.stderr).not.toMatch(/"level":[45]0/);
    expect(rows).toEqual(datasetTransfers(dataset));
    // 42501 insufficient_privilege; dropping or altering a table someone else owns is 42501 too
    expect(refused).toEqual(Object.fromEntries(Object.keys(refused).map((k) => [k, '42501'])));
    expect(migrateAsExporter.code).not.toBe(0);

    // without the queue's schema, the exporter cannot make it, and says who can
    await connectedAs(ownerUrl, async (c) => {
      await c.query('DROP SCHEMA graphile_worker CASCADE');
    });
    const unqueued = await runCli(['worker', '--once'], { env });
    expect(unqueued.code, unqueued.stderr).toBe(1);
    expect(unqueued.stderr).toMatch(/may not do it\. Run `erc20-etl migrate` as the role that owns the warehouse/);

    // a role that may only read the warehouse's tables: status shows the transfers and says the queue is not its to
    // read; a run is told which privilege is missing and where the grants are, not to try again
    expect((await runCli(['migrate'], { env: { DATABASE_URL: ownerUrl } })).code).toBe(0);
    await connectedAs(serverUrl(), async (c) => {
      await c.query(`CREATE ROLE ${reader} LOGIN PASSWORD 'reads'`);
      await c.query(`GRANT CONNECT ON DATABASE ${database} TO ${reader}`);
    });
    await connectedAs(ownerUrl, async (c) => {
      await c.query(`GRANT USAGE ON SCHEMA public TO ${reader}`);
      await c.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${reader}`);
    });
    const readerEnv = { DATABASE_URL: url(reader, 'reads'), CHAIN_API_URL: `${devnet.origin}/${SECRET}` };
    const readStatus = await runCli(['status'], { env: readerEnv });
    expect(readStatus.code, readStatus.stderr).toBe(0);
    expect(readStatus.stdout).toMatch(/^ {2}rows: +1217$/m);
    expect(readStatus.stdout).toMatch(
      /^queue: not readable by this role \(permission denied for schema graphile_worker: grant this role the queue's tables as README "Database privileges" shows to see it\)$/m,
    );
    const readJson = await runCli(['status', '--json'], { env: readerEnv });
    expect(readJson.code, readJson.stderr).toBe(0);
    expect(JSON.parse(readJson.stdout)).toMatchObject({ queue: null, queueUnreadable: expect.stringContaining('permission denied for schema graphile_worker') });
    const readRun = await runCli(args, { env: readerEnv });
    expect(readRun.code).toBe(1);
    expect(readRun.stderr).toMatch(/PostgreSQL refused the run: permission denied for table \w+ \(SQLSTATE 42501\): the role of DATABASE_URL lacks a privilege/);
    expect(readRun.stderr).toContain('README "Database privileges"');
    expect(readRun.stderr).not.toContain('unexpected failure');
  }, 240_000);
});

/** The statements of an SQL block: split at `;` ending a line, comments dropped. */
function statements(block: string): string[] {
  return block
    .split(/;[ \t]*(?:--[^\n]*)?\n/)
    .map((s) => s.replace(/--[^\n]*/g, '').trim())
    .filter(Boolean);
}

async function connectedAs(url: string, work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}
