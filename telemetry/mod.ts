/**
 * The service's own traces and metrics, over Deno's built-in OpenTelemetry (`OTEL_DENO=true`,
 * OTLP/HTTP to `OTEL_EXPORTER_OTLP_ENDPOINT`; docs/deploy.md "Telemetry") and the
 * `@opentelemetry/api` package, whose providers Deno registers itself. Deno already traces every
 * request `Deno.serve` answers and every `fetch`; this module names request spans by their route
 * pattern, adds a span per job message and audit step, and the metrics an operator watches.
 *
 * Off by default and then close to free: the exporting instruments are never created, `span()`
 * calls its function directly, and only plain integer counters are kept (which `GET
 * /admin/health` shows). Timings (request and KV commit latency) are taken only when on.
 * A leaf: it imports no module of the service, so every layer may report to it.
 *
 * @example
 * ```ts
 * import { recordRateLimited, span } from "./mod.ts";
 * await span("audit.step", { "job.id": "aud_1" }, () => Promise.resolve());
 * recordRateLimited();
 * ```
 *
 * @module
 */
import {
  type Attributes,
  type Counter,
  type Histogram,
  metrics,
  type ObservableResult,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";

/** Whether Deno exports telemetry in this process (read once, at load). */
export const telemetryOn: boolean = (() => {
  try {
    return Deno.env.get("OTEL_DENO") === "true";
  } catch {
    return false; // no env permission: Deno could not have read it either
  }
})();

const NAME = "serpwright";

/** The in-process totals since start: what `GET /admin/health` shows, kept on or off. */
const totals = {
  rateLimited: 0,
  webhooks: {} as Record<string, number>,
  jobsFinished: {} as Record<string, number>,
  jobsFailedRuns: {} as Record<string, number>,
  jobsTakenOver: {} as Record<string, number>,
  crawlPages: 0,
  crawlBytes: 0,
  kvCommits: 0,
  kvConflicts: 0,
};
/** The latest job-table counts (the maintenance tick refreshes them where it runs). */
let queueGauge: { queued: Record<string, number>; running: Record<string, number> } = {
  queued: {},
  running: {},
};
const startedAt = Date.now();

interface Instruments {
  tracer: Tracer;
  httpDuration: Histogram;
  kvCommitDuration: Histogram;
  kvConflicts: Counter;
  rateLimited: Counter;
  webhooks: Counter;
  jobsFinished: Counter;
  jobRunFailures: Counter;
  jobsTakenOver: Counter;
  crawlPages: Counter;
  crawlBytes: Counter;
}

/** Created once when on; null when off (nothing is registered with the API at all). */
const inst: Instruments | null = telemetryOn ? create() : null;

function create(): Instruments {
  const meter = metrics.getMeter(NAME);
  const gauges = meter.createObservableGauge("serpwright.jobs", {
    description: "Jobs in the job table (state=queued, due or not) and leased (state=running)",
  });
  gauges.addCallback((r: ObservableResult) => {
    // The usual kinds are observed at zero too, so a dashboard's series exist from the start.
    const queued = { audit: 0, article: 0, recheck: 0, delivery: 0, ...queueGauge.queued };
    const running = { audit: 0, article: 0, recheck: 0, ...queueGauge.running };
    for (const [kind, n] of Object.entries(queued)) r.observe(n, { kind, state: "queued" });
    for (const [kind, n] of Object.entries(running)) r.observe(n, { kind, state: "running" });
  });
  return {
    tracer: trace.getTracer(NAME),
    httpDuration: meter.createHistogram("serpwright.http.duration", {
      description: "Time to the response's headers, by route pattern, method and status",
      unit: "ms",
    }),
    kvCommitDuration: meter.createHistogram("serpwright.kv.commit.duration", {
      description: "Time of an atomic commit (lock retries included)",
      unit: "ms",
    }),
    kvConflicts: meter.createCounter("serpwright.kv.commit.conflicts", {
      description: "Atomic commits refused because a checked key had changed",
    }),
    rateLimited: meter.createCounter("serpwright.rate_limit.refusals", {
      description: "Requests refused with 429 rate_limited",
    }),
    webhooks: meter.createCounter("serpwright.webhook.deliveries", {
      description: "Webhook delivery attempts by outcome",
    }),
    jobsFinished: meter.createCounter("serpwright.jobs.finished", {
      description: "Audits, articles and re-checks that ended, by kind and outcome",
    }),
    jobRunFailures: meter.createCounter("serpwright.jobs.run_failures", {
      description: "Job messages whose handler threw (the queue retries them), by kind",
    }),
    jobsTakenOver: meter.createCounter("serpwright.jobs.taken_over", {
      description: "Claims of a job whose last worker left its run or step unfinished, by kind",
    }),
    crawlPages: meter.createCounter("serpwright.crawl.pages", {
      description: "Pages fetched by audit crawls (rate: pages per second)",
    }),
    crawlBytes: meter.createCounter("serpwright.crawl.bytes", {
      description: "Bytes of pages fetched by audit crawls (rate: bytes per second)",
      unit: "By",
    }),
  };
}

/**
 * Runs `fn` inside a span (its own trace when nothing is active); an error marks the span and is
 * rethrown. When off, `fn` is simply called.
 */
export function span<T>(name: string, attrs: Attributes, fn: () => Promise<T>): Promise<T> {
  if (!inst) return fn();
  return inst.tracer.startActiveSpan(name, { attributes: attrs }, async (s) => {
    try {
      return await fn();
    } catch (err) {
      s.recordException(err as Error);
      s.setStatus({ code: SpanStatusCode.ERROR, message: String((err as Error)?.message ?? err) });
      throw err;
    } finally {
      s.end();
    }
  });
}

/** A clock for a latency, or null when off (no timing is taken then). */
export function startTimer(): number | null {
  return inst ? performance.now() : null;
}

/**
 * Records one answered request under its route pattern (`/v1/audits/:audit_id`, never the raw
 * path) and names Deno's request span after it.
 */
export function recordRequest(t0: number | null, method: string, route: string, status: number) {
  if (!inst || t0 === null) return;
  const attrs = {
    "http.request.method": method,
    "http.route": route,
    "http.response.status_code": status,
  };
  inst.httpDuration.record(performance.now() - t0, attrs);
  const active = trace.getActiveSpan();
  if (active) {
    active.updateName(`${method} ${route}`);
    active.setAttribute("http.route", route);
  }
}

/** Records one atomic commit: its latency (when timed) and whether a check refused it. */
export function recordCommit(t0: number | null, ok: boolean): void {
  totals.kvCommits++;
  if (!ok) totals.kvConflicts++;
  if (!inst || t0 === null) return;
  inst.kvCommitDuration.record(performance.now() - t0, { ok });
  if (!ok) inst.kvConflicts.add(1);
}

/** Counts a request refused with 429. */
export function recordRateLimited(): void {
  totals.rateLimited++;
  inst?.rateLimited.add(1);
}

/** Counts a webhook delivery attempt by outcome (delivered, retry_scheduled, failed, ...). */
export function recordWebhook(outcome: string): void {
  totals.webhooks[outcome] = (totals.webhooks[outcome] ?? 0) + 1;
  inst?.webhooks.add(1, { outcome });
}

/** Counts a leased job that ended. */
export function recordJobFinished(kind: string, outcome: string): void {
  const k = `${kind}.${outcome}`;
  totals.jobsFinished[k] = (totals.jobsFinished[k] ?? 0) + 1;
  inst?.jobsFinished.add(1, { kind, outcome });
}

/** Counts a job message whose handler threw. */
export function recordJobRunFailure(kind: string): void {
  totals.jobsFailedRuns[kind] = (totals.jobsFailedRuns[kind] ?? 0) + 1;
  inst?.jobRunFailures.add(1, { kind });
}

/**
 * Counts a claim that took a job over: its last worker died, handed it back, or stopped renewing
 * its lease before it finished the run or step, which now starts again.
 */
export function recordJobTakenOver(kind: string): void {
  totals.jobsTakenOver[kind] = (totals.jobsTakenOver[kind] ?? 0) + 1;
  inst?.jobsTakenOver.add(1, { kind });
}

/**
 * Counts the pages and bytes one committed crawl step fetched itself. Counted per step, not from
 * the audit's running totals: in a partitioned crawl every worker commits the whole crawl's totals,
 * and differences of those counted other workers' pages again in each process.
 */
export function recordCrawlStep(fetched: { pages: number; bytes: number }): void {
  totals.crawlPages += fetched.pages;
  totals.crawlBytes += fetched.bytes;
  inst?.crawlPages.add(fetched.pages);
  inst?.crawlBytes.add(fetched.bytes);
}

/** Sets the job-table counts the `serpwright.jobs` gauge reports. */
export function setJobCounts(
  counts: { queued: Record<string, number>; running: Record<string, number> },
): void {
  queueGauge = counts;
}

/** This process's totals since it started, for `GET /admin/health`. */
export function telemetrySnapshot() {
  const up = Math.max(1, (Date.now() - startedAt) / 1000);
  return {
    exporting: telemetryOn,
    since: new Date(startedAt).toISOString(),
    rate_limited: totals.rateLimited,
    webhook_deliveries: { ...totals.webhooks },
    jobs_finished: { ...totals.jobsFinished },
    job_run_failures: { ...totals.jobsFailedRuns },
    jobs_taken_over: { ...totals.jobsTakenOver },
    crawl: {
      pages: totals.crawlPages,
      bytes: totals.crawlBytes,
      pages_per_second: Math.round((totals.crawlPages / up) * 100) / 100,
    },
    kv: { commits: totals.kvCommits, conflicts: totals.kvConflicts },
  };
}
