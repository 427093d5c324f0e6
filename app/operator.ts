/**
 * The operator's use cases: what the service's operator does at `/admin` with `ADMIN_TOKEN`
 * (app/actor.ts `OperatorActor`). They are not `/v1` operations or MCP tools (not in
 * app/operations/index.ts's registry, nor in the OpenAPI document): an agent never reaches them.
 * The route (routes/admin.ts) checks the token, parses with the schemas here, calls one function
 * and renders its result.
 *
 * @example
 * ```ts
 * import { operatorActor } from "./actor.ts";
 * import { mintLiveKey } from "./operator.ts";
 * import type { Services } from "./services.ts";
 * declare const services: Services;
 * const key = await mintLiveKey(services, operatorActor("203.0.113.7"), "acc_123");
 * console.log(key.api_key); // the raw live key, shown once
 * ```
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { publishArticle } from "../domain/articles/mod.ts";
import { grantOperatorCredits, MAX_OPERATOR_GRANT } from "../domain/billing/mod.ts";
import { createKey, getAccount } from "../domain/identity/mod.ts";
import {
  ApiError,
  checkIdempotencyKey,
  keys,
  newId,
  runIdempotent,
  sha256Hex,
} from "../domain/platform/mod.ts";
import type { OperatorActor } from "./actor.ts";
import type { Services } from "./services.ts";
import { apiKeyView, articleView } from "./views.ts";
import { countJobs, type JobCounts } from "../domain/jobs/mod.ts";
import { telemetrySnapshot } from "../telemetry/mod.ts";

/** `{account_id}` of the account endpoints. */
export const AccountParam = z.object({ account_id: z.string().min(1).max(100) });

/** A credit grant's body. */
export const GrantBody = z.object({
  credits: z.number().int().positive().max(MAX_OPERATOR_GRANT),
  reason: z.string().trim().min(1).max(200),
}).strict();

/** A credit grant's answer. */
export const GrantResponse = z.object({
  account_id: z.string(),
  credits_granted: z.number().int(),
  balance_credits: z.number().int(),
  reason: z.string(),
});

/** `{article_id}` of the publish endpoint. */
export const ArticleParam = z.object({ article_id: z.string().min(1).max(100) });

/** The publish body: where the article now lives (optional). */
export const PublishBody = z.object({ url: z.string().url().max(2000).optional() }).strict();

/**
 * Mints a live key for an account after a human completed its upgrade. 404 `not_found` for an
 * unknown account; the account's cached keys are dropped so the new key counts at once.
 */
export async function mintLiveKey(
  s: Services,
  _operator: OperatorActor,
  accountId: string,
): Promise<ReturnType<typeof apiKeyView>> {
  if (!(await getAccount(s.deps, accountId))) {
    throw new ApiError("not_found", `No account '${accountId}'`);
  }
  const { record, raw } = await createKey(s.deps, {
    accountId,
    mode: "live",
    name: "Live key",
    expiresAt: null,
  });
  s.resolver.invalidateAccount(accountId);
  return apiKeyView(record, null, raw);
}

/**
 * Grants credits (support, goodwill, development), ledgered with the reason. With an
 * idempotency key the grant happens once per key and body, and a repeat answers the stored
 * result (`replayed`).
 */
export async function grantCredits(
  s: Services,
  _operator: OperatorActor,
  accountId: string,
  body: z.infer<typeof GrantBody>,
  idempotencyKey?: string,
): Promise<{ body: z.infer<typeof GrantResponse>; replayed: boolean }> {
  const { deps } = s;
  const grant = async (ref: string) => {
    const { balance } = await grantOperatorCredits(deps, {
      accountId,
      credits: body.credits,
      reason: body.reason,
      ref,
    });
    return {
      account_id: accountId,
      credits_granted: body.credits,
      balance_credits: balance,
      reason: body.reason,
    };
  };
  if (idempotencyKey === undefined) {
    return { body: await grant(newId("grant", deps.clock.now())), replayed: false };
  }
  const key = idempotencyKey;
  checkIdempotencyKey(key, "Idempotency-Key");
  // The ledger reference comes from the key and body too, so even a run whose answer was
  // never stored (a crash between the grant and the record) grants once.
  const ref = `idem_${await sha256Hex(`${key}\u0000${body.credits}\u0000${body.reason}`)}`;
  const answer = await runIdempotent(deps, {
    key,
    scope: "admin",
    endpoint: `POST /admin/accounts/${accountId}/credits`,
    body,
    keyId: null,
    callerSecret: deps.config.adminToken ?? "",
    pepper: deps.config.webhookEncryptionKey,
  }, async () => ({
    status: 201,
    headers: [["content-type", "application/json"]],
    body: JSON.stringify(await grant(ref)),
  }));
  return {
    body: JSON.parse(answer.body) as z.infer<typeof GrantResponse>,
    replayed: answer.replayed,
  };
}

/**
 * Publishes a ready article of a subscribed project, optionally at `url` (http(s) only: 400
 * `invalid_request` otherwise).
 */
export async function publishArticleFor(
  s: Services,
  _operator: OperatorActor,
  articleId: string,
  body: z.infer<typeof PublishBody>,
): Promise<ReturnType<typeof articleView>> {
  if (body.url && !/^https?:\/\//i.test(body.url)) {
    throw new ApiError("invalid_request", "url: must be an http(s) URL");
  }
  return articleView(await publishArticle(s.deps, articleId, body));
}

/** The process's health as the operator sees it; `ok` false when KV cannot be read. */
export interface OperatorHealth {
  ok: boolean;
  kv: "reachable" | "unreachable";
  queue: { outbox_pending: number; jobs_running: number };
  /** Job-table rows by message type and leased jobs by kind (up to 1000 rows each). */
  jobs: JobCounts;
  /** This process's totals since start (`telemetry/mod.ts`), exported or not. */
  telemetry: ReturnType<typeof telemetrySnapshot>;
  process: {
    role: Services["process"]["role"];
    leader: boolean;
    worker?: { pid: number | null; restarts: number };
  };
  time: string;
}

/** Counts (up to 1000 each) the outbox and the running jobs, and describes this process. */
export async function operatorHealth(
  s: Services,
  _operator: OperatorActor,
): Promise<OperatorHealth> {
  const { deps } = s;
  let kvOk = true;
  let outbox = 0;
  let running = 0;
  let jobs: JobCounts = { queued: {}, running: {} };
  try {
    jobs = await countJobs(deps);
    for await (const _ of deps.kv.list({ prefix: keys.outboxAll() }, { limit: 1000 })) outbox++;
    for await (const _ of deps.kv.list({ prefix: keys.runningJobs() }, { limit: 1000 })) {
      running++;
    }
  } catch {
    kvOk = false;
  }
  return {
    ok: kvOk,
    kv: kvOk ? "reachable" : "unreachable",
    queue: { outbox_pending: outbox, jobs_running: running },
    jobs,
    telemetry: telemetrySnapshot(),
    process: {
      role: s.process.role,
      leader: s.process.leader,
      ...(s.process.worker
        ? { worker: { pid: s.process.worker.pid(), restarts: s.process.worker.restarts() } }
        : {}),
    },
    time: new Date(deps.clock.now()).toISOString(),
  };
}
