/**
 * `POST /admin/accounts/{account_id}/credits` over HTTP: the operator grants credits with a
 * reason, written to the ledger (a `grant` entry, reason `operator_grant`, the operator's words as
 * its note); replays with an Idempotency-Key grant once, even when sent together; 404 for an
 * unknown account; 400 `invalid_request` naming the field for bad input; 401 without the token.
 */
import assert from "node:assert/strict";
import { listLedger } from "../../domain/billing/credits.ts";
import { ADMIN_TOKEN, errorCode, type TestApp, withApp } from "../helpers/app.ts";
import { creditsShown } from "../helpers/credits.ts";

const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

function grant(app: TestApp, accountId: string, body: unknown, headers = {}) {
  return app.req("POST", `/admin/accounts/${accountId}/credits`, {
    body,
    headers: { ...ADMIN, ...headers },
  });
}

Deno.test("admin credits: a grant with its reason lands on the balance and in the ledger", () =>
  withApp(async (app) => {
    const { accountId } = await app.signup();
    const live = await app.liveKey(accountId);
    const res = await grant(app, accountId, { credits: 500, reason: "  development  " });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body, {
      account_id: accountId,
      credits_granted: 500,
      balance_credits: 500,
      reason: "development",
    });
    assert.equal(await creditsShown(app, live), 500);

    const second = await grant(app, accountId, { credits: 25, reason: "goodwill after an outage" });
    assert.equal(second.status, 201);
    assert.equal(second.body.balance_credits, 525);
    const ledger = await listLedger(app.kv, accountId);
    assert.deepEqual(
      ledger.map((e) => [e.kind, e.amount, e.reason, e.note, e.balanceAfter]),
      [
        ["grant", 500, "operator_grant", "development", 500],
        ["grant", 25, "operator_grant", "goodwill after an outage", 525],
      ],
    );
    assert.notEqual(ledger[0].ref, ledger[1].ref, "each call without a key is its own grant");
    assert.equal(await creditsShown(app, live), 525);
  }));

Deno.test("admin credits: an Idempotency-Key replays the answer and grants once, even sent together", () =>
  withApp(async (app) => {
    const { accountId } = await app.signup();
    const key = crypto.randomUUID();
    const body = { credits: 100, reason: "support ticket 42" };
    const answers = await Promise.all(
      [1, 2, 3, 4].map(() => grant(app, accountId, body, { "Idempotency-Key": key })),
    );
    for (const a of answers) {
      assert.equal(a.status, 201, a.text);
      assert.equal(a.body.balance_credits, 100);
    }
    assert.equal(answers.filter((a) => a.headers.get("idempotent-replayed") === "true").length, 3);
    const later = await grant(app, accountId, body, { "Idempotency-Key": key });
    assert.equal(later.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(later.body, answers[0].body);
    assert.equal((await listLedger(app.kv, accountId)).length, 1);

    const other = await grant(app, accountId, { ...body, credits: 5 }, { "Idempotency-Key": key });
    assert.equal(other.status, 409);
    assert.equal(errorCode(other), "idempotency_conflict");
    assert.equal((await listLedger(app.kv, accountId)).length, 1);
  }));

Deno.test("admin credits: 404 for an unknown account, 400 naming the field, 401 without the token", () =>
  withApp(async (app) => {
    const missing = await grant(app, "acct_nobody", { credits: 10, reason: "x" });
    assert.equal(missing.status, 404);
    assert.equal(errorCode(missing), "not_found");

    const { accountId } = await app.signup();
    const cases: [unknown, string][] = [
      [{ credits: 0, reason: "x" }, "credits"],
      [{ credits: -5, reason: "x" }, "credits"],
      [{ credits: 1.5, reason: "x" }, "credits"],
      [{ credits: "10", reason: "x" }, "credits"],
      [{ credits: 100_001, reason: "x" }, "credits"],
      [{ reason: "x" }, "credits"],
      [{ credits: 10 }, "reason"],
      [{ credits: 10, reason: "   " }, "reason"],
      [{ credits: 10, reason: "r".repeat(201) }, "reason"],
      [{ credits: 10, reason: "x", note: "y" }, "note"],
    ];
    for (const [body, field] of cases) {
      const res = await grant(app, accountId, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(errorCode(res), "invalid_request");
      assert.match(res.body.error.message, new RegExp(field), JSON.stringify(body));
    }
    const malformed = await app.req("POST", `/admin/accounts/${accountId}/credits`, {
      rawBody: "{",
      headers: { ...ADMIN, "content-type": "application/json" },
    });
    assert.equal(malformed.status, 400);
    assert.equal(errorCode(malformed), "invalid_request");
    const capped = await grant(app, accountId, { credits: 100_000, reason: "r".repeat(200) });
    assert.equal(capped.status, 201, "the cap itself is allowed");

    const anonymous = await app.req("POST", `/admin/accounts/${accountId}/credits`, {
      body: { credits: 10, reason: "x" },
    });
    assert.equal(anonymous.status, 401);
    assert.equal(errorCode(anonymous), "unauthorized");
    assert.equal((await listLedger(app.kv, accountId)).length, 1);
  }));

Deno.test("admin credits: absent (404) when ADMIN_TOKEN is unset", () =>
  withApp(async (app) => {
    const { accountId } = await app.signup();
    const res = await grant(app, accountId, { credits: 10, reason: "x" });
    assert.equal(res.status, 404);
  }, { env: { ADMIN_TOKEN: "" } }));
