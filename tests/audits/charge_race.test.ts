/**
 * Audit starts read what their charge checks (the balance, or the sandbox's trial usage) beside
 * the project (one round trip on a remote KV): starts racing on one balance still charge each
 * audit once and never past the balance, and a sandbox still gets its one audit.
 */
import assert from "node:assert/strict";
import { keys } from "../../kv/keys.ts";
import { errorCode, withApp } from "../helpers/app.ts";
import { balanceOf, liveWithCredits } from "../helpers/credits.ts";

/** A web process runs no job: the audits stay queued, which is all the test needs. */
const WEB = { env: { SERVICE_ROLE: "web" } };

Deno.test("audit starts racing on one balance: each audit is charged once, never past the balance", () =>
  withApp(async (app) => {
    // Two audits' worth of credits, six projects started at once.
    const { accountId, live: key } = await liveWithCredits(app, 50);
    const projects = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const res = await app.req("POST", "/v1/projects", {
          key,
          body: { url: `https://race-${i}.example.com` },
        });
        assert.equal(res.status, 201, res.text);
        return res.body.project_id as string;
      }),
    );
    const started = await Promise.all(
      projects.map((id) => app.req("POST", `/v1/projects/${id}/audits`, { key })),
    );
    const accepted = started.filter((r) => r.status === 202);
    assert.equal(accepted.length, 2, started.map((r) => r.status).join(","));
    for (const r of started.filter((r) => r.status !== 202)) {
      assert.equal(r.status, 402);
      assert.equal(errorCode(r), "insufficient_credits");
    }
    assert.equal(await balanceOf(app, accountId), 0);
    const debits = [];
    for await (
      const e of app.kv.list<{ kind: string; ref: string }>({
        prefix: keys.ledgerOfAccount(accountId),
      })
    ) if (e.value.kind === "debit") debits.push(e.value.ref);
    assert.deepEqual(
      debits.sort(),
      accepted.map((r) => r.body.audit_id as string).sort(),
      "one debit per accepted audit",
    );
  }, WEB));

Deno.test("a sandbox's audit starts racing: one trial audit, taken once, the others adopt it", () =>
  withApp(async (app) => {
    const { key, accountId } = await app.signup();
    const proj = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://sandbox-race.example.com" },
    });
    assert.equal(proj.status, 201, proj.text);
    const started = await Promise.all(
      Array.from(
        { length: 4 },
        () => app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key }),
      ),
    );
    assert.deepEqual(started.map((r) => r.status), [202, 202, 202, 202]);
    assert.equal(new Set(started.map((r) => r.body.audit_id)).size, 1, "one audit");
    const usage = (await app.kv.get<{ audits: number }>(keys.sandboxUsage(accountId))).value;
    assert.equal(usage?.audits, 1, "the trial's audit taken once");
  }, WEB));
