import type * as PromClient from "prom-client";

/**
 * The server's Prometheus metrics: one registry per running app, and a small registration API any
 * feature uses to add its own counters, gauges and histograms (backup age and result, reminders
 * delivered and failed, ...): `core.metrics.counter({ name, help, labelNames })`.
 *
 * Off by default (config `metricsToken` unset). Then every handle is a no-op, nothing is
 * measured, and prom-client is never loaded: it is required here on first use only (the bundler
 * evaluates a CommonJS package reached through `require()` when that call runs), so a server
 * without metrics neither pays its start-up time (~75 ms measured) nor holds its code.
 *
 * Names are still checked when off (the Prometheus name rules, and each name once per app), so a
 * clash between two features fails in every test run, not only where metrics are switched on.
 */

export type Labels<L extends string> = Partial<Record<L, string | number>>;

export interface CounterHandle<L extends string = string> {
  inc(labels?: Labels<L>, by?: number): void;
  /** The counter of one label set, found once: for a hot path (no label hashing per call). */
  child(labels: Labels<L>): { inc(by?: number): void };
}

export interface GaugeHandle<L extends string = string> {
  set(labels: Labels<L>, value: number): void;
}

export interface HistogramHandle<L extends string = string> {
  observe(labels: Labels<L>, value: number): void;
  /** The histogram of one label set, found once: for a hot path. */
  child(labels: Labels<L>): { observe(value: number): void };
}

/** One labelled value a gauge's collect function reports. */
export interface GaugeSample<L extends string> {
  labels: Labels<L>;
  value: number;
}

interface MetricDef<L extends string> {
  /** `app_` + what it measures + its unit (`_seconds`, `_bytes`, `_total` for counters). */
  name: string;
  help: string;
  labelNames?: readonly L[];
}

export interface GaugeDef<L extends string> extends MetricDef<L> {
  /**
   * Called on every scrape: a number (no labels), samples per label set (the gauge is cleared
   * first, so a label set that disappears is not reported any more), or null for "no value now".
   * It runs on the event loop: keep it cheap (a stat, a primary-key read), or cache.
   */
  collect?: () => number | GaugeSample<L>[] | null;
}

export interface HistogramDef<L extends string> extends MetricDef<L> {
  /** Upper bounds, ascending (in the metric's unit). */
  buckets: readonly number[];
}

/** What a feature sees: registration only (rendering is the /metrics route's business). */
export interface MetricsRegistry {
  readonly enabled: boolean;
  counter<L extends string = never>(def: MetricDef<L>): CounterHandle<L>;
  gauge<L extends string = never>(def: GaugeDef<L>): GaugeHandle<L>;
  histogram<L extends string = never>(def: HistogramDef<L>): HistogramHandle<L>;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

const NOOP_COUNTER: CounterHandle<never> = { inc() {}, child: () => ({ inc() {} }) };
const NOOP_GAUGE: GaugeHandle<never> = { set() {} };
const NOOP_HISTOGRAM: HistogramHandle<never> = { observe() {}, child: () => ({ observe() {} }) };

export class MetricsError extends Error {}

export class Metrics implements MetricsRegistry {
  private readonly names = new Set<string>();
  private readonly prom: typeof PromClient | null;
  private readonly registry: PromClient.Registry | null;

  constructor(readonly enabled: boolean) {
    // Loaded only when on (see the header); a plain require keeps createApp synchronous.
    this.prom = enabled ? (require("prom-client") as typeof PromClient) : null;
    this.registry = this.prom ? new this.prom.Registry() : null;
  }

  /** An app without metrics (the job worker, the CLI). */
  static off(): Metrics {
    return new Metrics(false);
  }

  /** The Prometheus text exposition of everything registered (collect functions run now). */
  async render(): Promise<{ contentType: string; body: string }> {
    if (!this.registry) throw new MetricsError("metrics are off");
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  counter<L extends string = never>(def: MetricDef<L>): CounterHandle<L> {
    this.check(def);
    if (!this.prom) return NOOP_COUNTER;
    const c = new this.prom.Counter({ name: def.name, help: def.help, labelNames: [...(def.labelNames ?? [])], registers: [this.registry!] });
    return {
      inc: (labels, by) => (labels ? c.inc(labels as PromClient.LabelValues<L>, by ?? 1) : c.inc(by ?? 1)),
      child: (labels) => c.labels(labels as PromClient.LabelValues<L>),
    };
  }

  gauge<L extends string = never>(def: GaugeDef<L>): GaugeHandle<L> {
    this.check(def);
    if (!this.prom) return NOOP_GAUGE;
    const collect = def.collect;
    const g = new this.prom.Gauge({
      name: def.name,
      help: def.help,
      labelNames: [...(def.labelNames ?? [])],
      registers: [this.registry!],
      ...(collect
        ? {
            collect(this: PromClient.Gauge<L>) {
              const v = collect();
              this.reset();
              if (v === null) return;
              if (typeof v === "number") this.set(v);
              else for (const s of v) this.set(s.labels as PromClient.LabelValues<L>, s.value);
            },
          }
        : {}),
    });
    return { set: (labels, value) => g.set(labels as PromClient.LabelValues<L>, value) };
  }

  histogram<L extends string = never>(def: HistogramDef<L>): HistogramHandle<L> {
    this.check(def);
    for (let i = 1; i < def.buckets.length; i++) {
      if (!(def.buckets[i]! > def.buckets[i - 1]!)) throw new MetricsError(`metric ${def.name}: buckets must ascend`);
    }
    if (!this.prom) return NOOP_HISTOGRAM;
    const h = new this.prom.Histogram({ name: def.name, help: def.help, labelNames: [...(def.labelNames ?? [])], buckets: [...def.buckets], registers: [this.registry!] });
    return { observe: (labels, value) => h.observe(labels as PromClient.LabelValues<L>, value), child: (labels) => h.labels(labels as PromClient.LabelValues<L>) };
  }

  private check(def: MetricDef<string>): void {
    if (!NAME.test(def.name)) throw new MetricsError(`metric name ${JSON.stringify(def.name)} is not a Prometheus name`);
    if (this.names.has(def.name)) throw new MetricsError(`metric ${def.name} is registered twice`);
    if (!def.help.trim()) throw new MetricsError(`metric ${def.name} needs a help text`);
    for (const l of def.labelNames ?? []) {
      if (!LABEL.test(l) || l.startsWith("__")) throw new MetricsError(`metric ${def.name}: label ${JSON.stringify(l)} is not a Prometheus label name`);
    }
    this.names.add(def.name);
  }
}
