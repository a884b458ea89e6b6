/**
 * Charts as inline SVG text: the report is one self-contained file, with no script and nothing fetched.
 * Every plotted point is an element with `data-point` (and a `<title>` a browser shows on hover), so a
 * test, or a reader, can count and read them. Pure.
 */

export interface Series {
  name: string;
  /** x: a label per point (a day, a run); y: where it is plotted; text: the exact value shown on hover. */
  points: readonly { x: string; y: number; text: string }[];
}

const WIDTH = 760;
const HEIGHT = 240;
const PAD = { left: 64, right: 24, top: 28, bottom: 48 };
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

/**
 * A name shortened for a legend or a row label: each contract address in it as `0xb20d…c11c`, then, if still longer
 * than `max` characters, its start cut with `…`: what tells one token from another at its end (a contract's address,
 * the chain: `USDC 0xb20d…c11c (chain 8453)`) stays whole while the name has a character left.
 *
 * @example shortName('0xa12a0f0a6fc3ef215e6e27ec907094eb03562f0c (chain 1)') // → '0xa12a…2f0c (chain 1)'
 * shortName('Synthetic USD 0xa12a0f0a6fc3ef215e6e27ec907094eb03562f0c (chain 8453)', 28) // → 'Sy… 0xa12a…2f0c (chain 8453)'
 */
export function shortName(name: string, max = 22): string {
  const short = name.replace(/0x[0-9a-fA-F]{40}/g, (a) => `${a.slice(0, 6)}…${a.slice(-4)}`);
  if (short.length <= max) return short;
  const [, head = '', tail = ''] = /^(.*?)((?: 0x[0-9a-fA-F]{4}…[0-9a-fA-F]{4})?(?: \(chain \d+\))?)$/.exec(short) ?? [];
  const room = max - tail.length - 1;
  return room >= 1 && head.length > 0 ? `${head.slice(0, room)}…${tail}` : `${short.slice(0, max - 1)}…`;
}

/** `<`, `>`, `&` and quotes as entities: for text and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The top of a y axis from 0: the largest value, or 4 when every value is 0 (one whole number a tick; 0 to 0 labels nothing). */
function axisTop(values: readonly number[]): number {
  const top = Math.max(0, ...values);
  return top > 0 ? top : 4;
}

/** Ticks and labels for a y axis from 0 to `max`. */
function yAxis(max: number, label: string): string {
  const lines: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    const y = PAD.top + (HEIGHT - PAD.top - PAD.bottom) * (1 - i / 4);
    lines.push(`<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${y}" y2="${y}" stroke="#ddd"/>`);
    lines.push(`<text x="${PAD.left - 6}" y="${y + 4}" text-anchor="end" font-size="11">${escapeHtml(compact(v))}</text>`);
  }
  lines.push(`<text x="4" y="12" font-size="11">${escapeHtml(label)}</text>`);
  return lines.join('');
}

/** 1234567 → `1.23M`: an axis label, not a value. */
function compact(v: number): string {
  const units: [number, string][] = [
    [1e12, 'T'],
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  if (Math.abs(v) >= 1e15) return v.toExponential(2);
  for (const [size, unit] of units) if (Math.abs(v) >= size) return `${(v / size).toPrecision(3)}${unit}`;
  return v >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toPrecision(3);
}

/** x labels: the first, the last and a few between, so they never overlap. */
function xLabels(labels: readonly string[], xOf: (i: number) => number): string {
  const every = Math.max(1, Math.ceil(labels.length / 6));
  return labels
    .map((l, i) => {
      if (i % every !== 0 && i !== labels.length - 1) return '';
      const anchor = labels.length > 1 && i === labels.length - 1 ? 'end' : i === 0 && labels.length > 1 ? 'start' : 'middle';
      return `<text x="${xOf(i)}" y="${HEIGHT - PAD.bottom + 16}" text-anchor="${anchor}" font-size="11">${escapeHtml(l)}</text>`;
    })
    .join('');
}

/** A legend row's height, and the most a legend entry's name may hold. */
const LEGEND_ROW = 16;
const LEGEND_NAME = 34;
/** The width an 11 px character may take (wide letters included), for laying out legend entries without a browser. */
const CHAR_WIDTH = 7;

/**
 * The legend: an entry per series, each as wide as its name, left to right under the chart, going on in rows below
 * when they do not fit across (the chart grows by a row each). Every entry stays inside the chart's width.
 */
function legend(series: readonly Series[]): { svg: string; rows: number } {
  const entries: string[] = [];
  let x = PAD.left;
  let row = 0;
  series.forEach((s, i) => {
    const name = shortName(s.name, LEGEND_NAME);
    const width = 14 + name.length * CHAR_WIDTH + 16;
    if (x > PAD.left && x + width > WIDTH - PAD.right) {
      row++;
      x = PAD.left;
    }
    const y = HEIGHT - 18 + row * LEGEND_ROW;
    entries.push(
      `<rect x="${x}" y="${y}" width="10" height="10" fill="${COLORS[i % COLORS.length]}"/><text data-legend x="${x + 14}" y="${y + 9}" font-size="11">${escapeHtml(name)}</text>`,
    );
    x += width;
  });
  return { svg: entries.join(''), rows: series.length ? row + 1 : 0 };
}

/**
 * A line chart of several series over shared x labels (sorted), a dot per point.
 *
 * @example lineChart('Daily transfers', 'transfers', [{ name: 'USDC', points: [{ x: '2024-01-01', y: 3, text: '3' }] }])
 * // → '<svg …><circle data-point … /></svg>'
 */
export function lineChart(title: string, yLabel: string, series: readonly Series[]): string {
  const labels = [...new Set(series.flatMap((s) => s.points.map((p) => p.x)))].sort();
  const max = axisTop(series.flatMap((s) => s.points.map((p) => p.y)));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const xOf = (i: number) => PAD.left + (labels.length === 1 ? plotW / 2 : (plotW * i) / (labels.length - 1));
  const yOf = (y: number) => PAD.top + plotH * (1 - y / max);
  const index = new Map(labels.map((l, i) => [l, i]));
  const body = series
    .map((s, n) => {
      const color = COLORS[n % COLORS.length]!;
      const pts = s.points.map((p) => ({ ...p, cx: xOf(index.get(p.x)!), cy: yOf(p.y) }));
      const path = pts.map((p, i) => `${i ? 'L' : 'M'}${p.cx.toFixed(1)},${p.cy.toFixed(1)}`).join('');
      const dots = pts
        .map(
          (p) =>
            `<circle data-point data-series="${escapeHtml(s.name)}" data-x="${escapeHtml(p.x)}" data-value="${escapeHtml(p.text)}" cx="${p.cx.toFixed(1)}" cy="${p.cy.toFixed(1)}" r="3" fill="${color}"><title>${escapeHtml(`${s.name}, ${p.x}: ${p.text}`)}</title></circle>`,
        )
        .join('');
      return `<path d="${path}" fill="none" stroke="${color}" stroke-width="1.5"/>${dots}`;
    })
    .join('');
  const key = legend(series);
  return frame(title, `${yAxis(max, yLabel)}${xLabels(labels, xOf)}${body}${key.svg}`, HEIGHT + Math.max(0, key.rows - 1) * LEGEND_ROW);
}

/**
 * A bar chart: one bar per point of one series.
 *
 * @example barChart('Rows per run', 'rows', { name: 'rows', points: [{ x: '#1', y: 10, text: '10' }] })
 */
export function barChart(title: string, yLabel: string, series: Series): string {
  const max = axisTop(series.points.map((p) => p.y));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const step = plotW / Math.max(1, series.points.length);
  const bars = series.points
    .map((p, i) => {
      const h = (plotH * p.y) / max;
      const x = PAD.left + i * step + step * 0.1;
      return `<rect data-point data-x="${escapeHtml(p.x)}" data-value="${escapeHtml(p.text)}" x="${x.toFixed(1)}" y="${(PAD.top + plotH - h).toFixed(1)}" width="${(step * 0.8).toFixed(1)}" height="${h.toFixed(1)}" fill="${COLORS[0]}"><title>${escapeHtml(`${p.x}: ${p.text}`)}</title></rect>`;
    })
    .join('');
  return frame(
    title,
    `${yAxis(max, yLabel)}${xLabels(
      series.points.map((p) => p.x),
      (i) => PAD.left + i * step + step / 2,
    )}${bars}`,
  );
}

export interface Span {
  row: string;
  from: number;
  to: number;
  text: string;
}

/** The most a coverage row's name may hold: 21 characters fit between x = 8 and the bars at 160. */
const ROW_NAME = 21;

/**
 * Horizontal spans per row over a number axis: what a contract's coverage looks like over blocks.
 *
 * @example spanChart('Coverage', [{ row: 'USDC', from: 100, to: 200, text: 'blocks 100–200' }])
 */
export function spanChart(title: string, spans: readonly Span[]): string {
  const rows = [...new Set(spans.map((s) => s.row))];
  const low = Math.min(...spans.map((s) => s.from));
  const high = Math.max(...spans.map((s) => s.to));
  const plotW = WIDTH - 160 - PAD.right;
  const xOf = (b: number) => 160 + (high === low ? plotW / 2 : (plotW * (b - low)) / (high - low));
  const rowH = 26;
  const height = PAD.top + rows.length * rowH + 40;
  const bars = spans
    .map((s) => {
      const y = PAD.top + rows.indexOf(s.row) * rowH;
      const x = xOf(s.from);
      return `<rect data-point data-row="${escapeHtml(s.row)}" data-from="${s.from}" data-to="${s.to}" x="${x.toFixed(1)}" y="${y}" width="${Math.max(2, xOf(s.to) - x).toFixed(1)}" height="${rowH - 8}" fill="${COLORS[2]}"><title>${escapeHtml(`${s.row}: ${s.text}`)}</title></rect>`;
    })
    .join('');
  const names = rows.map((r, i) => `<text data-label x="8" y="${PAD.top + i * rowH + 13}" font-size="11">${escapeHtml(shortName(r, ROW_NAME))}</text>`).join('');
  const axis = spans.length
    ? `<text x="160" y="${height - 12}" font-size="11">block ${low}</text><text x="${WIDTH - PAD.right}" y="${height - 12}" text-anchor="end" font-size="11">block ${high}</text>`
    : '';
  return frame(title, `${names}${bars}${axis}`, height);
}

function frame(title: string, content: string, height = HEIGHT): string {
  return `<figure><figcaption>${escapeHtml(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="${escapeHtml(title)}">${content}</svg></figure>`;
}
