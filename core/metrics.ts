/**
 * A small in-process metrics registry (counters, gauges, histograms with fixed buckets) rendered in the
 * Prometheus text format (version 0.0.4) for `GET /metrics`. No client library: the gateway needs a
 * handful of series and the format is a few lines.
 */

/** Label names and values of one series. */
export type Labels = Record<string, string>;

interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  render(): string[];
}

/** A value that only goes up. */
export class Counter {
  readonly #values = new Map<string, number>();

  /** Adds `by` (default 1) to the series of `labels`. */
  inc(labels: Labels = {}, by = 1): void {
    const key = labelKey(labels);
    this.#values.set(key, (this.#values.get(key) ?? 0) + by);
  }

  /** The current value of one series (tests). */
  get(labels: Labels = {}): number {
    return this.#values.get(labelKey(labels)) ?? 0;
  }

  /** @internal */
  lines(name: string): string[] {
    return [...this.#values].map(([key, value]) => `${name}${key} ${value}`);
  }
}

/** A value set from outside (queue depth); `collect` refreshes it before each render. */
export class Gauge {
  readonly #values = new Map<string, number>();

  /** Sets the series of `labels` to `value`. */
  set(labels: Labels, value: number): void {
    this.#values.set(labelKey(labels), value);
  }

  /** @internal */
  lines(name: string): string[] {
    return [...this.#values].map(([key, value]) => `${name}${key} ${value}`);
  }
}

/** Observations counted into fixed buckets (upper bounds, ascending), with their sum and count. */
export class Histogram {
  readonly #buckets: readonly number[];
  readonly #series = new Map<string, { counts: number[]; sum: number; count: number }>();

  constructor(buckets: readonly number[]) {
    this.#buckets = [...buckets].sort((a, b) => a - b);
  }

  /** Counts `value` into the series of `labels` (in every bucket whose bound it does not exceed). */
  observe(labels: Labels, value: number): void {
    const key = labelKey(labels);
    let s = this.#series.get(key);
    if (!s) {
      s = { counts: this.#buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, s);
    }
    for (const [i, bound] of this.#buckets.entries()) if (value <= bound) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  /** @internal */
  lines(name: string): string[] {
    const out: string[] = [];
    for (const [key, s] of this.#series) {
      const inner = key.slice(1, -1);
      const withLe = (le: string) => `{${inner ? `${inner},` : ""}le="${le}"}`;
      for (const [i, bound] of this.#buckets.entries()) {
        out.push(`${name}_bucket${withLe(String(bound))} ${s.counts[i]}`);
      }
      out.push(`${name}_bucket${withLe("+Inf")} ${s.count}`);
      out.push(`${name}_sum${key} ${s.sum}`);
      out.push(`${name}_count${key} ${s.count}`);
    }
    return out;
  }
}

/** The registry: create metrics once, render them on each scrape. */
export class MetricsRegistry {
  readonly #families = new Map<string, Family>();
  readonly #collectors: (() => Promise<void> | void)[] = [];

  /** Registers a counter. @throws Error for a malformed or already registered name. */
  counter(name: string, help: string): Counter {
    const metric = new Counter();
    this.#add({ name, help, type: "counter", render: () => metric.lines(name) });
    return metric;
  }

  /** Registers a gauge. @throws Error for a malformed or already registered name. */
  gauge(name: string, help: string): Gauge {
    const metric = new Gauge();
    this.#add({ name, help, type: "gauge", render: () => metric.lines(name) });
    return metric;
  }

  /** Registers a histogram with fixed bucket bounds. @throws Error for a malformed or taken name. */
  histogram(name: string, help: string, buckets: readonly number[]): Histogram {
    const metric = new Histogram(buckets);
    this.#add({ name, help, type: "histogram", render: () => metric.lines(name) });
    return metric;
  }

  /**
   * Runs before each render (reads gauges from elsewhere). A collector that throws is skipped for that
   * render; its gauges keep their last values.
   */
  collect(collector: () => Promise<void> | void): void {
    this.#collectors.push(collector);
  }

  /** The Prometheus text exposition of every metric. */
  async render(): Promise<string> {
    await Promise.allSettled(this.#collectors.map(async (c) => c()));
    const out: string[] = [];
    for (const f of this.#families.values()) {
      out.push(`# HELP ${f.name} ${f.help.replaceAll("\\", "\\\\").replaceAll("\n", "\\n")}`);
      out.push(`# TYPE ${f.name} ${f.type}`);
      out.push(...f.render());
    }
    return `${out.join("\n")}\n`;
  }

  #add(family: Family): void {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(family.name)) throw new Error(`bad metric name ${family.name}`);
    if (this.#families.has(family.name)) throw new Error(`metric ${family.name} is already registered`);
    this.#families.set(family.name, family);
  }
}

/** The content type of the text exposition. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Characters a label value escapes. */
const ESCAPED = /[\\"\n]/;

/** `{a="1",b="2"}` with names sorted, or "" without labels. */
function labelKey(labels: Labels): string {
  const names = Object.keys(labels);
  if (!names.length) return "";
  // Every turn counts into several series: no sort, closures or escaping unless needed.
  if (names.length > 1) names.sort();
  let key = "{";
  for (let i = 0; i < names.length; i++) {
    const n = names[i]!;
    const v = labels[n]!;
    const value = ESCAPED.test(v)
      ? v.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n")
      : v;
    key += `${i ? "," : ""}${n}="${value}"`;
  }
  return `${key}}`;
}
