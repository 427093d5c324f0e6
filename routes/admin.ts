import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { createKey } from "../domain/api_keys.ts";
import { getAccount } from "../domain/accounts.ts";
import { ApiError } from "../domain/errors.ts";
import { keys } from "../kv/keys.ts";
import { ApiKey } from "./api_keys.ts";
import type { AppEnv, Services } from "./env.ts";
import { responses } from "./openapi_helpers.ts";
import { apiKeyView } from "../app/views.ts";

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
