/**
 * Credits for test accounts: granted through the ledger (`grantCredits` of
 * domain/billing/credits.ts, the call a paid credit pack ends in), and read back from KV or over
 * HTTP. Tests of the ledger itself (tests/billing/ledger.test.ts) call the domain directly.
 */
import { getBalance, grantCredits as grantInLedger } from "../../domain/billing/credits.ts";
import assert from "node:assert/strict";
import type { TestApp, TestResponse } from "./app.ts";
import { waitForAudit } from "./jobs.ts";

/**
 * Grants `amount` credits to `accountId` through the ledger; returns the balance after. A grant
 * applies once per `ref` (default: a fresh one each call); `reason` defaults to "test".
 */
export async function grantCredits(
  app: TestApp,
  accountId: string,
  amount: number,
  opts: { reason?: string; ref?: string } = {},
): Promise<number> {
  const { balance } = await grantInLedger(app.service.services.deps, {
    accountId,
    amount,
    reason: opts.reason ?? "test",
    ref: opts.ref ?? `t-${crypto.randomUUID()}`,
  });
  return balance;
}

/** A new account's live key with `credits` on its balance (none granted for 0). */
export async function liveWithCredits(
  app: TestApp,
  credits: number,
): Promise<{ accountId: string; live: string }> {
  const { accountId } = await app.signup();
  const live = await app.liveKey(accountId);
  if (credits) await grantCredits(app, accountId, credits);
  return { accountId, live };
}

/** The account's balance as stored. */
export function balanceOf(app: TestApp, accountId: string): Promise<number> {
  return getBalance(app.kv, accountId);
}

/** The balance `key` is shown by `GET /v1/credits`. */
export async function creditsShown(app: TestApp, key: string): Promise<number> {
  return (await app.req("GET", "/v1/credits", { key })).body.balance_credits;
}

/**
 * A live account with 100 credits starts an audit of `origin` as a new project. Returns the key,
 * the account and the audit's id.
 */
export async function startLiveAudit(
  app: TestApp,
  origin: string,
): Promise<{ key: string; accountId: string; id: string }> {
  const { live: key, accountId } = await liveWithCredits(app, 100);
  const proj = await app.req("POST", "/v1/projects", { key, body: { url: origin } });
  assert.equal(proj.status, 201, proj.text);
  const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
  assert.equal(started.status, 202, started.text);
  return { key, accountId, id: started.body.audit_id as string };
}

/**
 * `startLiveAudit`, and the audit awaited to its end (within `timeoutMs`). Returns the key, the
 * audit's id and its final `GET` response.
 */
export async function completedLiveAudit(
  app: TestApp,
  origin: string,
  timeoutMs = 90_000,
): Promise<{ key: string; id: string; done: TestResponse }> {
  const { key, id } = await startLiveAudit(app, origin);
  return { key, id, done: await waitForAudit(app, key, id, { timeoutMs }) };
}
