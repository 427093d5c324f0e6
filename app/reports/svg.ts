/**
 * The report's charts: small SVG builders drawn on the server, so the page needs no script, no
 * CDN and no client library, prints as vectors and costs a few kilobytes. Each chart is an
 * `<svg role="img">` named by its `<title>` and described by its `<desc>` (`aria-labelledby`),
 * and the page next to it carries the same figures as a table. Colours are paired with a second
 * cue (dash patterns for the lines, the number itself on the gauge and bars), so nothing is told
 * by colour alone.
 *
 * Hand-written rather than a chart library: the three shapes needed (a gauge, horizontal bars,
 * a line chart on a fixed 0–100 scale) take ~150 lines, while the libraries that render SVG on
 * the server either need a DOM (D3 with jsdom or linkedom) or bring a layout engine several
 * hundred kilobytes large, and none would escape our labels the way app/html.ts does.
 *
 * @module
 */
import { type Html, html } from "../html.ts";

/** The colour of a 0–100 score: Lighthouse's bands (90+ good, 50–89 average, below poor). */
export function scoreColor(score: number): string {
  return score >= 90 ? "#0a7a32" : score >= 50 ? "#a04f00" : "#b42318";
}

/** A word for the band, so colour is never the only cue. */
export function scoreBand(score: number): string {
  return score >= 90 ? "good" : score >= 50 ? "needs work" : "poor";
}

const f1 = (n: number) => (Math.round(n * 10) / 10).toString();

/** The overall score as a ring gauge (`id`: unique within the page, names its title). */
export function gauge(id: string, score: number, title: string, description: string): Html {
  const r = 50;
  const circumference = 2 * Math.PI * r;
  const filled = (Math.max(0, Math.min(100, score)) / 100) * circumference;
  return html`
    <svg class="chart gauge" viewBox="0 0 120 120" width="160" height="160"
      role="img" aria-labelledby="${id}-t ${id}-d" xmlns="http://www.w3.org/2000/svg">
      <title id="${id}-t">${title}</title>
      <desc id="${id}-d">${description}</desc>
      <circle cx="60" cy="60" r="${r}" fill="none" stroke="#e4e7eb" stroke-width="12" />
      <circle cx="60" cy="60" r="${r}" fill="none" stroke="${scoreColor(score)}" stroke-width="12"
        stroke-linecap="round" stroke-dasharray="${f1(filled)} ${f1(circumference)}"
        transform="rotate(-90 60 60)" />
      <text x="60" y="62" text-anchor="middle" dominant-baseline="middle" font-size="30"
        font-weight="700" fill="#1b1f24">${score}</text>
      <text x="60" y="88" text-anchor="middle" font-size="10" fill="#57606a">of 100</text>
    </svg>
  `;
}

/** Horizontal bars of 0–100 values, each labelled with its name and value. */
export function bars(
  id: string,
  items: { label: string; value: number }[],
  title: string,
  description: string,
): Html {
  const rowH = 26;
  const labelW = 110;
  const barW = 180;
  const height = items.length * rowH + 8;
  return html`
    <svg class="chart bars" viewBox="0 0 ${labelW + barW + 44} ${height}"
      width="${labelW + barW + 44}" height="${height}" role="img"
      aria-labelledby="${id}-t ${id}-d" xmlns="http://www.w3.org/2000/svg">
        <title id="${id}-t">${title}</title>
        <desc id="${id}-d">${description}</desc>
        ${items.map((it, i) => {
          const y = 4 + i * rowH;
          const w = (Math.max(0, Math.min(100, it.value)) / 100) * barW;
          return html`
            <g>
              <text x="0" y="${y + 15}" font-size="12" fill="#1b1f24">${it.label}</text>
              <rect x="${labelW}" y="${y + 3}" width="${barW}" height="16" rx="3" fill="#e4e7eb" />
              <rect x="${labelW}" y="${y + 3}" width="${f1(w)}" height="16" rx="3"
                fill="${scoreColor(it.value)}" />
              <text x="${labelW + barW + 6}" y="${y + 15}" font-size="12" font-weight="600"
                fill="#1b1f24">${it.value}</text>
            </g>
          `;
        })}
      </svg>
  `;
}

/** One line of a line chart: its name, a value per x position (null: no point), its dashes. */
export interface Series {
  name: string;
  values: (number | null)[];
  color: string;
  /** `stroke-dasharray`, or null for a solid line. */
  dash: string | null;
  width: number;
}

/** A small sample of a series' stroke, for the legend beside the chart. */
export function swatch(s: Series): Html {
  return html`
    <svg width="28" height="10" viewBox="0 0 28 10" aria-hidden="true"
      focusable="false" xmlns="http://www.w3.org/2000/svg">
      <line x1="1" y1="5" x2="27" y2="5"
        stroke="${s.color}" stroke-width="${s.width}"
        ${s.dash ? html`stroke-dasharray="${s.dash}"` : ""} />
    </svg>
  `;
}

/** Lines over a 0–100 scale, one x position per label (dates), with gridlines every 25. */
export function lineChart(
  id: string,
  labels: string[],
  series: Series[],
  title: string,
  description: string,
): Html {
  const W = 640;
  const H = 240;
  const left = 34;
  const right = 12;
  const top = 10;
  const bottom = 34;
  const plotW = W - left - right;
  const plotH = H - top - bottom;
  const n = labels.length;
  const x = (i: number) => left + (n <= 1 ? plotW / 2 : (i / (n - 1)) * plotW);
  const y = (v: number) => top + plotH - (Math.max(0, Math.min(100, v)) / 100) * plotH;
  // At most ~8 date labels, evenly spread, always the last one.
  const every = Math.max(1, Math.ceil(n / 8));
  const shown = labels.map((_, i) => i).filter((i) => i % every === 0 || i === n - 1);
  return html`
    <svg class="chart line" viewBox="0 0 ${W} ${H}" width="${W}"
      height="${H}"
      role="img" aria-labelledby="${id}-t ${id}-d" xmlns="http://www.w3.org/2000/svg">
        <title id="${id}-t">${title}</title>
        <desc id="${id}-d">${description}</desc>
        ${[0, 25, 50, 75, 100].map((v) =>
          html`
            <line x1="${left}" x2="${W - right}" y1="${y(v)}" y2="${y(v)}" stroke="#d0d7de"
              stroke-width="1" />
            <text x="${left - 6}" y="${y(v) + 4}" font-size="11" text-anchor="end"
              fill="#57606a">${v}</text>
          `
        )}
        ${shown.map((i) =>
          html`
            <text x="${f1(x(i))}" y="${H - 12}" font-size="11" text-anchor="middle"
              fill="#57606a">${labels[i]}</text>
          `
        )}
        ${series.map((s) => {
          const pts = s.values.map((v, i) => (v === null ? null : `${f1(x(i))},${f1(y(v))}`))
            .filter((p): p is string => p !== null);
          return html`<g>
        ${
            pts.length > 1
              ? html`
                <polyline points="${pts.join(" ")}" fill="none" stroke="${s.color}"
                  stroke-width="${s.width}" stroke-linejoin="round"
                  ${s.dash ? html`stroke-dasharray="${s.dash}"` : ""} />
              `
              : ""
          }
        ${
            s.values.map((v, i) =>
              v === null ? "" : html`
                <circle cx="${f1(x(i))}" cy="${f1(y(v))}" r="${s.width + 1}"
                  fill="${s.color}" />
              `
            )
          }
      </g>`;
        })}
      </svg>
  `;
}

/** One bar of `stackedBars`: its label and its parts (each a count, a name and a colour). */
export interface StackedBar {
  label: string;
  parts: { name: string; value: number; color: string }[];
}

/**
 * Horizontal bars of counts on a common scale (the largest total fills the width), each split
 * into its parts and followed by its figures in words ("2 critical, 3 warning"), so the colours
 * are never the only cue. Where the issues are: one bar per category.
 */
export function stackedBars(
  id: string,
  items: StackedBar[],
  title: string,
  description: string,
): Html {
  const rowH = 26;
  const labelW = 110;
  const barW = 150;
  const textW = 190;
  const height = items.length * rowH + 8;
  const totals = items.map((it) => it.parts.reduce((n, p) => n + p.value, 0));
  const max = Math.max(1, ...totals);
  return html`
    <svg class="chart stacked" viewBox="0 0 ${labelW + barW + textW} ${height}"
      width="${labelW + barW + textW}" height="${height}" role="img"
      aria-labelledby="${id}-t ${id}-d" xmlns="http://www.w3.org/2000/svg">
        <title id="${id}-t">${title}</title>
        <desc id="${id}-d">${description}</desc>
        ${items.map((it, i) => {
          const y = 4 + i * rowH;
          let x = labelW;
          const words = it.parts.filter((p) => p.value > 0).map((p) => `${p.value} ${p.name}`);
          return html`
            <g>
              <text x="0" y="${y + 15}" font-size="12" fill="#1b1f24">${it.label}</text>
              <rect x="${labelW}" y="${y + 3}" width="${barW}" height="16" rx="3" fill="#f0f2f4" />
              ${it.parts.map((p) => {
                const w = (p.value / max) * barW;
                const at = x;
                x += w;
                return p.value > 0
                  ? html`
                    <rect x="${f1(at)}" y="${y + 3}" width="${f1(w)}" height="16"
                      fill="${p.color}" />
                  `
                  : "";
              })}
              <text x="${labelW + barW + 6}" y="${y +
                15}" font-size="12" fill="#1b1f24">${words.length
                ? words.join(", ")
                : "none"}</text>
            </g>
          `;
        })}
      </svg>
  `;
}
