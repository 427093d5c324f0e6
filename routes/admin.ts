import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { createKey } from "../domain/identity/api_keys.ts";
import { getAccount } from "../domain/identity/accounts.ts";
import { grantOperatorCredits, MAX_OPERATOR_GRANT } from "../domain/billing/credits.ts";
import { ApiError } from "../domain/platform/errors.ts";
import { newId } from "../domain/platform/ids.ts";
import { checkIdempotencyKey, runIdempotent } from "../domain/platform/idempotent_request.ts";
import { sha256Hex } from "../domain/platform/replay_seal.ts";
import { keys } from "../kv/keys.ts";
import { ApiKey } from "./api_keys.ts";
import type { AppEnv, Services } from "./env.ts";
import { IdempotencyHeader, responses } from "./openapi_helpers.ts";
import { apiKeyView } from "../app/views.ts";

const AccountParam = z.object({ account_id: z.string().min(1).max(100) });

const GrantBody = z.object({
  credits: z.number().int().positive().max(MAX_OPERATOR_GRANT),
  reason: z.string().trim().min(1).max(200),
}).strict();

const GrantResponse = z.object({
  account_id: z.string(),
  credits_granted: z.number().int(),
  balance_credits: z.number().int(),
  reason: z.string(),
});

/**
 * Operator endpoints under `/admin`, guarded by ADMIN_TOKEN (`requireAdmin`, mounted in app.ts
 * before the body reader); absent (404) when it is unset.
 */
export function adminRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const { deps } = s;

  app.openapi(
    createRoute({
      method: "post",
      path: "/admin/accounts/{account_id}/live-keys",
      tags: ["Operator"],
      summary: "Mint a live key after a human completed the upgrade",
      hide: true,
      request: { params: z.object({ account_id: z.string().min(1).max(100) }) },
      responses: responses(
        { 201: { description: "The live key, raw value shown once", schema: ApiKey } },
        ["unauthorized", "not_found", "key_limit_reached"],
      ),
    }),
    async (c) => {
      const accountId = c.req.valid("param").account_id;
      if (!(await getAccount(deps, accountId))) {
        throw new ApiError("not_found", `No account '${accountId}'`);
      }
      const { record, raw } = await createKey(deps, {
        accountId,
        mode: "live",
        name: "Live key",
        expiresAt: null,
      });
      s.resolver.invalidateAccount(accountId);
      return c.json(apiKeyView(record, null, raw), 201);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/admin/accounts/{account_id}/credits",
      tags: ["Operator"],
      summary: "Grant credits (support, goodwill, development), ledgered with the reason",
      hide: true,
      request: {
        params: AccountParam,
        headers: IdempotencyHeader,
        body: { content: { "application/json": { schema: GrantBody } }, required: true },
      },
      responses: responses(
        { 201: { description: "Granted; the new balance", schema: GrantResponse } },
        ["unauthorized", "not_found", "idempotency_conflict"],
      ),
    }),
    async (c) => {
      const accountId = c.req.valid("param").account_id;
      const body = c.req.valid("json");
      const key = c.req.header("idempotency-key");
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
      if (key === undefined) return c.json(await grant(newId("grant", deps.clock.now())), 201);
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
      if (answer.replayed) c.header("Idempotent-Replayed", "true");
      return c.json(JSON.parse(answer.body) as z.infer<typeof GrantResponse>, 201);
    },
  );

  app.get("/admin/health", async (c) => {
    let kvOk = true;
    let outbox = 0;
    let running = 0;
    try {
      for await (const _ of deps.kv.list({ prefix: keys.outboxAll() }, { limit: 1000 })) outbox++;
      for await (const _ of deps.kv.list({ prefix: keys.runningJobs() }, { limit: 1000 })) {
        running++;
      }
    } catch {
      kvOk = false;
    }
    return c.json({
      ok: kvOk,
      kv: kvOk ? "reachable" : "unreachable",
      queue: { outbox_pending: outbox, jobs_running: running },
      process: {
        role: s.process.role,
        leader: s.process.leader,
        ...(s.process.worker
          ? { worker: { pid: s.process.worker.pid(), restarts: s.process.worker.restarts() } }
          : {}),
      },
      time: new Date(deps.clock.now()).toISOString(),
    }, kvOk ? 200 : 503);
  });
}
