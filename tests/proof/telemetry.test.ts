/**
 * The OpenTelemetry export, end to end: the server runs as a child process with `OTEL_DENO=true`
 * and exports OTLP/HTTP (JSON, `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) to a real receiver on
 * loopback in this test. After a signup, an audit of a fixture site that fires a webhook, and a
 * burst past the rate limit, the receiver must hold the request spans (named by route pattern),
 * the job and audit-step spans, and every metric the deployment guide's dashboard reads.
 * `GET /admin/health` shows the same headline numbers.
 */
import assert from "node:assert/strict";
import { html, page, serveSite } from "../helpers/sites.ts";
import { ADMIN_TOKEN } from "../helpers/app.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { startReceiver } from "../webhooks/helpers.ts";
import {
  CHILD_POLL,
  killAll,
  liveAccount,
  newProject,
  packPaidEvent,
  postStripe,
  type ServerProcess,
  startServer,
  tempKvPath,
  until,
} from "./process.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** A minimal OTLP/HTTP receiver: keeps every JSON body posted to /v1/traces and /v1/metrics. */
function otlpReceiver() {
  const traces: Json[] = [];
  const metrics: Json[] = [];
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      const body = await req.text();
      if (req.method !== "POST") return new Response(null, { status: 405 });
      if (path === "/v1/traces") traces.push(JSON.parse(body));
      else if (path === "/v1/metrics") metrics.push(JSON.parse(body));
      return Response.json({});
    },
  );
  const spans = () =>
    traces.flatMap((t) =>
      (t.resourceSpans ?? []).flatMap((r: Json) =>
        (r.scopeSpans ?? []).flatMap((s: Json) => s.spans ?? [])
      )
    );
  const metricList = () =>
    metrics.flatMap((m) =>
      (m.resourceMetrics ?? []).flatMap((r: Json) =>
        (r.scopeMetrics ?? []).flatMap((s: Json) => s.metrics ?? [])
      )
    );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    spans,
    metricList,
    /** The data points of every export of metric `name`. */
    points: (name: string): Json[] =>
      metricList().filter((m: Json) => m.name === name).flatMap((m: Json) =>
        (m.sum ?? m.histogram ?? m.gauge)?.dataPoints ?? []
      ),
    close: async () => {
      ac.abort();
      await server.finished;
    },
  };
}

/** An OTLP attribute's value, whatever its type. */
function attr(point: Json, key: string): unknown {
  const a = (point.attributes ?? []).find((x: Json) => x.key === key)?.value;
  if (!a) return undefined;
  return a.stringValue ?? a.boolValue ??
    (a.intValue !== undefined ? Number(a.intValue) : a.doubleValue);
}

const value = (p: Json) => Number(p.asInt ?? p.asDouble ?? p.count ?? 0);

Deno.test("OTEL_DENO=true: request and job spans, and the service's metrics, reach an OTLP/HTTP receiver", async () => {
  const otlp = otlpReceiver();
  const site = serveSite({
    "/": html(page({ title: "Telemetry test home page", links: ["/a", "/b"] })),
    "/a": html(page({ title: "Telemetry test page A", key: "a" })),
    "/b": html(page({ title: "Telemetry test page B", key: "b" })),
  });
  const hooks = startReceiver();
  const kvFile = await tempKvPath();
  let s: ServerProcess | null = null;
  try {
    s = await startServer(kvFile.path, {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_METRIC_EXPORT_INTERVAL: "500",
      OTEL_SERVICE_NAME: "serpwright-test",
      RATE_LIMIT_PER_MINUTE: "40",
    });
    const server = s;
    const { accountId, key } = await liveAccount(s);
    await postStripe(s, await packPaidEvent(s, accountId));
    const hook = await s.req("POST", "/v1/webhooks", {
      key,
      body: { url: hooks.url, events: ["audit.completed"] },
    });
    assert.equal(hook.status, 201, hook.text);
    const project = await newProject(s, key, site.origin);
    const started = await s.req("POST", `/v1/projects/${project}/audits`, { key });
    assert.equal(started.status, 202, started.text);
    const auditId = started.body.audit_id as string;
    const done = await waitForAudit(s, key, auditId, { ...CHILD_POLL, timeoutMs: 60_000 });
    assert.equal(done.body.status, "completed", done.text);
    await hooks.waitFor(1, 30_000);
    // Past the per-key limit: some of these are refused with 429.
    const burst = await Promise.all(
      Array.from({ length: 60 }, () => server.req("GET", "/v1/account", { key })),
    );
    assert.ok(burst.some((r) => r.status === 429), "the burst met the rate limit");

    const sum = (name: string, where: (p: Json) => boolean = () => true) =>
      Math.max(0, ...otlp.points(name).filter(where).map(value));
    await until(
      () =>
        Promise.resolve(
          sum("serpwright.rate_limit.refusals") > 0 &&
            sum("serpwright.webhook.deliveries", (p) => attr(p, "outcome") === "delivered") > 0 &&
            otlp.spans().some((sp: Json) => sp.name === "audit.step"),
        ),
      30_000,
      "the exports",
    );

    // Traces: a span per request named by route pattern, a span per job message and audit step.
    const spans = otlp.spans();
    const names = new Set(spans.map((sp: Json) => sp.name));
    assert.ok(names.has("GET /v1/audits/:auditId"), [...names].join(", "));
    assert.ok(names.has("POST /v1/projects/:projectId/audits"), [...names].join(", "));
    assert.ok(names.has("job audit"), [...names].join(", "));
    assert.ok(names.has("audit.step"), [...names].join(", "));
    const step = spans.find((sp: Json) => sp.name === "audit.step");
    assert.equal(attr(step, "job.id"), auditId);

    // Metrics.
    const http = otlp.points("serpwright.http.duration");
    const routes = new Set(http.map((p) => attr(p, "http.route")));
    assert.ok(routes.has("/v1/account"), [...routes].join(", "));
    assert.ok(routes.has("/v1/audits/:auditId"), [...routes].join(", "));
    assert.ok(![...routes].some((r) => String(r).includes(auditId)), "no raw path as a route");
    assert.ok(sum("serpwright.crawl.pages") >= 3, `pages ${sum("serpwright.crawl.pages")}`);
    assert.ok(sum("serpwright.crawl.bytes") > 1000, `bytes ${sum("serpwright.crawl.bytes")}`);
    assert.ok(otlp.points("serpwright.kv.commit.duration").length > 0, "KV commit latency");
    assert.ok(
      sum(
        "serpwright.jobs.finished",
        (p) => attr(p, "kind") === "audit" && attr(p, "outcome") === "completed",
      ) >= 1,
      "a finished audit",
    );
    assert.ok(otlp.metricList().some((m: Json) => m.name === "serpwright.jobs"), "the jobs gauge");

    // The operator's health carries the same headline numbers.
    const health = await s.req("GET", "/admin/health", {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    assert.equal(health.status, 200, health.text);
    const t = health.body.telemetry;
    assert.equal(t.exporting, true);
    assert.ok(t.rate_limited > 0, health.text);
    assert.ok(t.webhook_deliveries.delivered >= 1, health.text);
    assert.ok(t.crawl.pages >= 3, health.text);
    assert.ok(t.kv.commits > 0, health.text);
    assert.equal(t.jobs_finished["audit.completed"], 1, health.text);
    assert.equal(typeof health.body.jobs.queued, "object");
    assert.equal(typeof health.body.jobs.running, "object");
  } catch (err) {
    console.error(s?.logs());
    throw err;
  } finally {
    await killAll(s);
    await hooks.close();
    await site.close();
    await otlp.close();
    await kvFile.remove();
  }
});
