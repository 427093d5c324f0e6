/**
 * Accepting a re-check of one check of a completed audit: the checks in the one order
 * (visibility → the check → the audit's state → something to re-check → funding → effect), the
 * URLs taken from the audit's stored evidence, and the charge, the record, its items and its
 * queue message in one commit.
 *
 * @module
 */
import { atomically } from "../../kv/atomic.ts";
import { CHECKS_BY_ID, getMany, recheckRule } from "../audit_engine/mod.ts";
import { getAudit } from "../audits/mod.ts";
import {
  addDebit,
  type Funding,
  isActive,
  readBalance,
  RECHECK_MAX_URLS,
  recheckCredits,
  type WorkActor,
} from "../billing/mod.ts";
import { ApiError, type Deps, keys, list, newId, read, readMany } from "../platform/mod.ts";
import type { RunningJobMarker } from "../jobs/mod.ts";
import {
  RECHECK_QUEUE_GRACE_MS,
  type RecheckItem,
  recheckLeaseMs,
  type RecheckRecord,
} from "./record.ts";

/**
 * Accepts a re-check of `checkId` on audit `auditId` for `actor`:
 * - 404 `not_found`: an audit the actor cannot see (another account's, the other mode's) or an
 *   unknown check id;
 * - 409 `invalid_state`: a check that cannot be re-checked on its own URLs (recheck_rules.ts
 *   says why), an audit not completed, an audit of a staging site (`auth`: its credentials are
 *   gone, `stagingAuditRefused`), or a check that did not fire in this audit;
 * - funding: included with the project's active subscription; a sandbox key is refused (402
 *   `payment_required`); a live key pays `recheckCredits(urls)` (402 `insufficient_credits`).
 * The first RECHECK_MAX_URLS affected URLs of the audit's stored evidence, in its order (by URL),
 * become the items; the rest is counted as left out.
 */
export async function createRecheck(
  deps: Deps,
  actor: WorkActor,
  auditId: string,
  checkId: string,
): Promise<RecheckRecord> {
  const { kv, clock } = deps;
  const audit = await getAudit(deps, actor.accountId, auditId, actor.mode);
  const check = CHECKS_BY_ID.get(checkId);
  if (!check) throw new ApiError("not_found", `No check '${checkId}'; see /docs/checks`);
  const rule = recheckRule(checkId);
  if (rule.mode === "refused") {
    throw new ApiError(
      "invalid_state",
      `'${checkId}' cannot be re-checked on its own URLs: ${rule.why}. Start a new audit to ` +
        "see whether it is fixed.",
    );
  }
  if (audit.status !== "completed") {
    throw new ApiError(
      "invalid_state",
      `Audit '${auditId}' is ${audit.status}; its checks can be re-checked once it is completed`,
    );
  }
  if (audit.auth) throw stagingAuditRefused(auditId);
  const issue = (await read(kv, keys.auditIssues(auditId))).value?.issues
    .find((i) => i.check === checkId);
  const urls = issue && issue.affected > 0 ? await affectedUrls(kv, auditId, checkId) : [];
  if (!issue || urls.length === 0) {
    throw new ApiError(
      "invalid_state",
      `'${checkId}' did not fire in audit '${auditId}': there is nothing to re-check`,
    );
  }
  const depths = await getMany(kv, urls.map((u) => keys.auditPage(auditId, u)));

  return await atomically<RecheckRecord>(kv, async () => {
    const [projectEntry, subEntry] = await readMany(kv, [
      keys.project(actor.accountId, audit.projectId),
      keys.subscription(audit.projectId),
    ]);
    if (!projectEntry.value) {
      throw new ApiError("not_found", `No audit '${auditId}' on this account`);
    }
    const now = clock.now();
    const id = newId("rck", now);
    const op = kv.atomic().check(projectEntry, subEntry);
    let funding: Funding;
    if (isActive(subEntry.value, now)) funding = { kind: "subscription" };
    else if (actor.mode === "sandbox") {
      throw new ApiError(
        "payment_required",
        "Sandbox keys cannot re-check a fix (the trial's one audit is the whole trial); use a " +
          "live key with credits, or subscribe the project",
      );
    } else {
      const amount = recheckCredits(urls.length);
      const balance = await readBalance(kv, actor.accountId);
      addDebit(op, balance, {
        accountId: actor.accountId,
        amount,
        reason: "recheck_urls",
        ref: id,
        now,
      });
      funding = { kind: "credits", amount, unit: "recheck_urls" };
    }
    const leaseUntil = now + recheckLeaseMs(deps, RECHECK_QUEUE_GRACE_MS);
    const record: RecheckRecord = {
      id,
      accountId: actor.accountId,
      projectId: audit.projectId,
      auditId,
      check: checkId,
      status: "queued",
      funding,
      createdAt: now,
      runningAt: null,
      completedAt: null,
      error: null,
      urls: urls.length,
      affected: issue.affected,
      leftOut: Math.max(0, issue.affected - urls.length),
      done: 0,
      counts: { fixed: 0, still_failing: 0, not_checked: 0 },
      noAnswer: 0,
      bytes: 0,
      nextSlotAt: 0,
      attempts: 0,
      leaseUntil,
      inStep: false,
      stepToken: null,
    };
    const key = keys.recheck(actor.accountId, id);
    op.check({ key, versionstamp: null })
      .set(key, record)
      .set(keys.recheckOwner(id), actor.accountId)
      .set(
        keys.runningJob("recheck", id),
        {
          id,
          accountId: actor.accountId,
          leaseUntil,
        } satisfies RunningJobMarker,
      );
    urls.forEach((url, seq) => {
      const item: RecheckItem = { url, depth: depths[seq]?.depth ?? -1, outcome: null };
      op.set(keys.recheckItem(id, seq), item);
    });
    deps.queue.enqueueIn(op, { type: "recheck", id });
    return { op, result: record };
  });
}

/**
 * The refusal of a re-check of a staging audit (one crawled with `auth`): its sealed credentials
 * are deleted by the commit that ends the audit (domain/audits/site_access.ts), so a re-check
 * would fetch the pages without them and judge the login wall, which can read as "fixed".
 * Keeping the credentials past the audit for its re-checks would break that promise, so the
 * re-check is refused (409 `invalid_state`, `reason: "staging_audit"`) before anything is charged.
 */
export function stagingAuditRefused(auditId: string): ApiError {
  return new ApiError(
    "invalid_state",
    `Audit '${auditId}' crawled a staging site with credentials (auth), which were deleted when ` +
      "it ended; a re-check without them would judge the login page, not the fix. Start a new " +
      "audit with auth to see whether it is fixed (nothing was charged)",
    { reason: "staging_audit" },
  );
}

/**
 * The first RECHECK_MAX_URLS distinct URLs of a check's stored evidence, in its order (by URL).
 * Reads at most the check's stored items (the findings cap), stopping at the limit.
 */
async function affectedUrls(kv: Deno.Kv, auditId: string, checkId: string): Promise<string[]> {
  const urls: string[] = [];
  const it = list(kv, { prefix: keys.auditFindings(auditId, checkId) }, { batchSize: 500 });
  for await (const e of it) {
    const url = e.key[3];
    if (urls[urls.length - 1] === url) continue;
    if (urls.length === RECHECK_MAX_URLS) break;
    urls.push(url);
  }
  return urls;
}
