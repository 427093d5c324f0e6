import { openTestKv } from "../helpers/kv.ts";
import assert from "node:assert/strict";
import { tableQueue } from "../../jobs/table_queue.ts";
import { withApp } from "../helpers/app.ts";
import { pollUntil } from "../helpers/jobs.ts";
import { html, page, serveSite } from "../helpers/sites.ts";

Deno.test("with JOB_QUEUE=table (stores without native queues) audits and articles still run", () =>
  withApp(async (app) => {
    const site = serveSite({ "/": html(page({ title: "Table queue home page" })) });
    try {
      const { key } = await app.signup();
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
      const audit = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
      const article = await app.req("POST", `/v1/projects/${proj.body.project_id}/articles`, {
        key,
        body: { topic: "Queue without queues" },
      });
      const { a, b } = await pollUntil(
        async () => ({
          a: (await app.req("GET", `/v1/audits/${audit.body.audit_id}`, { key })).body.status,
          b: (await app.req("GET", `/v1/articles/${article.body.article_id}`, { key })).body.status,
        }),
        (s) => s.a === "completed" && s.b === "ready",
        {
          intervalMs: 50,
          what: "the audit completed and the article ready",
        },
      );
      assert.equal(a, "completed");
      assert.equal(b, "ready");
      // A crawl step's fallback message (the next step ran at once in this process) stays a row
      // until the poller claims it and finds the step done: it must drain, not linger.
      const rows = await pollUntil(
        async () => {
          let n = 0;
          for await (const _ of app.kv.list({ prefix: ["job_queue"] })) n++;
          return n;
        },
        (n) => n === 0,
        { timeoutMs: 10_000, intervalMs: 50, what: "no job row left" },
      );
      assert.equal(rows, 0, "every job row was claimed");
    } finally {
      await site.close();
    }
  }, { env: { JOB_QUEUE: "table" } }));

Deno.test("table queue: two pollers on one KV run each job exactly once", async () => {
  const kv = await openTestKv();
  try {
    const q1 = tableQueue(kv);
    const q2 = tableQueue(kv);
    for (let i = 0; i < 40; i++) await q1.enqueue({ type: "audit", id: `a${i}` });
    const seen: string[] = [];
    const handler = async (m: { id: string }) => {
      seen.push(m.id);
      await new Promise((r) => setTimeout(r, 1));
    };
    await Promise.all([q1.drain(handler), q2.drain(handler), q1.drain(handler)]);
    await q2.drain(handler);
    assert.equal(seen.length, 40);
    assert.equal(new Set(seen).size, 40);
  } finally {
    kv.close();
  }
});

Deno.test("table queue: a drain beside the listener keeps to the worker's concurrency", async () => {
  const kv = await openTestKv();
  const stop = new AbortController();
  try {
    const q = tableQueue(kv);
    for (let i = 0; i < 12; i++) await q.enqueue({ type: "audit", id: `a${i}` });
    let running = 0;
    let most = 0;
    const done: string[] = [];
    const handler = async (m: { id: string }) => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 20));
      running--;
      done.push(m.id);
    };
    const listening = q.listen(handler, stop.signal, 1);
    // The maintenance tick drains due jobs while the poller runs them: both in one process.
    while (done.length < 12) {
      await Promise.all([q.drain(handler), q.drain(handler)]);
      await new Promise((r) => setTimeout(r, 5));
    }
    stop.abort();
    await listening;
    assert.equal(new Set(done).size, 12, "every job ran once");
    assert.equal(done.length, 12);
    assert.equal(most, 1, "never two jobs at once in a worker of concurrency 1");
  } finally {
    stop.abort();
    kv.close();
  }
});
