/**
 * The metrics registry renders valid Prometheus text: counters with labels (escaped), cumulative
 * histogram buckets with +Inf, sum and count, and gauges refreshed by collectors at each render.
 */
import { describe, expect, it } from "vitest";
import { MetricsRegistry } from "../../core/metrics.js";

describe("MetricsRegistry", () => {
  it("renders counters, gauges and histograms in the text format", async () => {
    const registry = new MetricsRegistry();
    const turns = registry.counter("herald_turns_total", "Turns.");
    const latency = registry.histogram("herald_latency_seconds", "Latency.", [0.1, 1]);
    const depth = registry.gauge("herald_depth", "Depth.");
    let waiting = 3;
    registry.collect(() => depth.set({}, waiting));
    registry.collect(() => {
      throw new Error("a broken collector does not stop the render");
    });
    turns.inc({ outcome: "ok" });
    turns.inc({ outcome: "ok" });
    turns.inc({ outcome: 'we"ird\n' });
    latency.observe({}, 0.05);
    latency.observe({}, 0.5);
    latency.observe({}, 5);

    const text = await registry.render();
    expect(text).toContain("# TYPE herald_turns_total counter\n");
    expect(text).toContain('herald_turns_total{outcome="ok"} 2\n');
    expect(text).toContain('herald_turns_total{outcome="we\\"ird\\n"} 1\n');
    expect(text).toContain('herald_latency_seconds_bucket{le="0.1"} 1\n');
    expect(text).toContain('herald_latency_seconds_bucket{le="1"} 2\n');
    expect(text).toContain('herald_latency_seconds_bucket{le="+Inf"} 3\n');
    expect(text).toContain("herald_latency_seconds_sum 5.55\n");
    expect(text).toContain("herald_latency_seconds_count 3\n");
    expect(text).toContain("herald_depth 3\n");
    waiting = 0;
    expect(await registry.render()).toContain("herald_depth 0\n");
    // Every sample line is `name{labels} value`.
    for (const line of text
      .trim()
      .split("\n")
      .filter((l) => !l.startsWith("#"))) {
      expect(line).toMatch(/^[a-z_]+(\{.*\})? [0-9.e+-]+$/);
    }
  });

  it("refuses a name registered twice", () => {
    const registry = new MetricsRegistry();
    registry.counter("x_total", "X.");
    expect(() => registry.counter("x_total", "X.")).toThrow(/already registered/);
  });
});
