/**
 * Inline SVG bar charts of the last hour (no script, no library): one bar per minute, scaled to the
 * largest value, with a title and a text summary for screen readers.
 */
import { escapeHtml, raw, type SafeHtml } from "./html.js";

const WIDTH = 600;
const HEIGHT = 120;

/**
 * A bar chart of `values` (undefined: no bar). `label` names the chart for assistive technology;
 * `unit` is appended to the shown maximum.
 */
export function barChart(values: readonly (number | undefined)[], label: string, unit = ""): SafeHtml {
  const max = Math.max(0, ...values.map((v) => v ?? 0));
  const step = WIDTH / Math.max(1, values.length);
  const bars: string[] = [];
  values.forEach((v, i) => {
    if (v === undefined || v <= 0 || max === 0) return;
    const h = Math.max(1, Math.round((v / max) * (HEIGHT - 4)));
    bars.push(
      `<rect x="${(i * step + 1).toFixed(1)}" y="${HEIGHT - h}" width="${Math.max(1, step - 2).toFixed(1)}" height="${h}"><title>${escapeHtml(`${Math.round(v)}${unit}`)}</title></rect>`,
    );
  });
  const summary = max === 0 ? "no data in the last hour" : `peak ${Math.round(max)}${unit}`;
  return raw(
    `<figure class="chart"><svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(`${label}: ${summary}`)}" preserveAspectRatio="none"><line x1="0" y1="${HEIGHT - 0.5}" x2="${WIDTH}" y2="${HEIGHT - 0.5}" class="axis"/>${bars.join("")}</svg><figcaption>${escapeHtml(label)} <span class="muted">(last 60 min, ${escapeHtml(summary)})</span></figcaption></figure>`,
  );
}
