import { readFileSync } from 'node:fs';
import { copyLine } from './src/warehouse/copy.ts';
const rows = readFileSync('test/fixtures/mainnet/transfers.jsonl', 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const many = []; while (many.length < 200_000) for (const r of rows) many.push({ ...r, transactionHash: r.transactionHash.slice(0, -4) + String(many.length % 10000).padStart(4, '0') });
const suffix = '\t1\t1\t1\n';
let sink = 0;
function a() { for (let s = 0; s < many.length; s += 100) { let text = ''; for (let i = s; i < s + 100; i++) text += copyLine(many[i], suffix); const b = Buffer.from(text, 'utf8'); sink += b.length; } }
function b() { for (let s = 0; s < many.length; s += 100) { const buf = Buffer.allocUnsafe(40_000); let off = 0; for (let i = s; i < s + 100; i++) off += buf.latin1Write(copyLine(many[i], suffix), off); sink += buf.subarray(0, off).length; } }
function c() { for (let s = 0; s < many.length; s += 100) { const parts = []; for (let i = s; i < s + 100; i++) parts.push(copyLine(many[i], suffix)); const b = Buffer.from(parts.join(''), 'latin1'); sink += b.length; } }
for (let round = 0; round < 5; round++) for (const [n, f] of [['concat+utf8', a], ['latin1Write', b], ['join+latin1', c]] as const) { const t = performance.now(); f(); console.log(n, (performance.now() - t).toFixed(0), 'ms'); }
console.log(sink, rows.length);
