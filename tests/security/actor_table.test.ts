/**
 * The README's actor table is generated from the operation registry (app/actor_table.ts); this
 * checks the README holds exactly that table and walks it: every key operation refuses an
 * anonymous caller, every public one serves it, and every sandbox refusal the table declares is
 * what a sandbox key meets. The OAuth-token column is walked case by case in
 * tests/proof/parity.test.ts (a third run of every case as a token).
 */
import assert from "node:assert/strict";
import { ACTOR_TABLE_END, ACTOR_TABLE_START, actorTable } from "../../app/actor_table.ts";
import { concretePath } from "../../app/operation.ts";
import { OPERATIONS } from "../../app/operations/index.ts";
import { freshIp, withApp } from "../helpers/app.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { html, page, serveSite } from "../helpers/sites.ts";

Deno.test("the README's actor table is the registry's (scripts/actor_table.ts --write)", async () => {
  const readme = await Deno.readTextFile(new URL("../../README.md", import.meta.url));
  const start = readme.indexOf(ACTOR_TABLE_START);
  const end = readme.indexOf(ACTOR_TABLE_END);
  assert.ok(start >= 0 && end > start, "README.md has the actor-table markers");
  assert.equal(
    normalized(readme.slice(start + ACTOR_TABLE_START.length, end)),
    normalized(actorTable(OPERATIONS)),
    "regenerate with: deno run -A scripts/actor_table.ts --write",
  );
});

/** A Markdown table without the padding `deno fmt` adds to align its columns. */
function normalized(table: string): string {
  return table.trim().split("\n").map((line) =>
    line.split("|").map((cell) => cell.trim().replace(/^-{3,}$/, "---")).join("|")
  ).join("\n");
}

Deno.test("actor walk: anonymous callers reach only public operations", async () => {
  await withApp(async (app) => {
    for (const op of OPERATIONS) {
      const params = Object.fromEntries(
        [...op.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name, "x_unknown"]),
      );
      const res = await app.req(op.method.toUpperCase(), concretePath(op.path, params), {
        ip: freshIp(),
        ...(op.method === "get" || op.method === "delete" ? {} : { body: {} }),
      });
      if (op.access === "key") {
        assert.equal(res.status, 401, `${op.id} without a key: ${res.text}`);
        assert.equal(res.body.error.code, "unauthorized", op.id);
      } else {
        assert.notEqual(res.status, 401, `${op.id} is public: ${res.text}`);
      }
    }
  });
});

Deno.test("actor walk: each sandbox refusal the table declares is what a sandbox key meets", async () => {
  const site = serveSite((p) => p === "/" ? html(page({ title: null })) : undefined);
  await withApp(async (app) => {
    const trial = await app.signup();
    const project = await app.req("POST", "/v1/projects", {
      key: trial.key,
      body: { url: site.origin },
    });
    assert.equal(project.status, 201, project.text);
    const projectId = project.body.project_id;
    const started = await app.req("POST", `/v1/projects/${projectId}/audits`, { key: trial.key });
    assert.equal(started.status, 202, started.text);
    const audit = await waitForAudit(app, trial.key, started.body.audit_id);
    assert.equal(audit.body.status, "completed", audit.text);
    // One sandbox request per operation the table says refuses a sandbox key.
    const requests: Record<string, { method: string; path: string; body?: unknown }> = {
      "rechecks.start": {
        method: "POST",
        path: `/v1/audits/${started.body.audit_id}/issues/title_missing/recheck`,
      },
      "billing.subscribe": {
        method: "POST",
        path: "/v1/subscriptions",
        body: { project_id: projectId, plan_id: "basic" },
      },
      "billing.purchase_credits": {
        method: "POST",
        path: "/v1/credits/purchases",
        body: { pack_id: "pack_500" },
      },
      "billing.portal": { method: "POST", path: "/v1/billing-portal" },
      "schedules.set": {
        method: "PUT",
        path: `/v1/projects/${projectId}/schedule`,
        body: { cadence: "weekly", hour_utc: 6 },
      },
    };
    for (const op of OPERATIONS) {
      if (!op.sandbox || !("refuse" in op.sandbox)) continue;
      const request = requests[op.id];
      assert.ok(request, `no sandbox walk for ${op.id}: add its request here`);
      const res = await app.req(request.method, request.path, {
        key: trial.key,
        ...(request.body ? { body: request.body } : {}),
      });
      assert.equal(res.body?.error?.code, op.sandbox.refuse, `${op.id}: ${res.text}`);
    }
  }).finally(() => site.close());
});
