import type { Context, MiddlewareHandler } from "hono";
import {
  checkIdempotencyKey,
  idempotencyScope,
  runIdempotent,
} from "../../domain/idempotent_request.ts";
import type { AppEnv, Services } from "../env.ts";
import { clientIp } from "./request_id.ts";

/** Headers that describe the response itself and are replayed verbatim. */
const REPLAYED_HEADERS = ["content-type", "location", "cache-control"];

/**
 * `Idempotency-Key` on POSTs, with the rules of `domain/idempotent_request.ts` (replay only of the
 * same request by the same key, sealed at rest, scoped to the account and key mode or, on signup,
 * the client address). A replay carries `Idempotent-Replayed: true`.
 */
export function idempotency(services: Services): MiddlewareHandler<AppEnv> {
  const { config } = services.deps;
  return async function idempotencyMiddleware(c, next) {
    const key = c.req.header("idempotency-key");
    if (key === undefined || c.req.method !== "POST") return await next();
    checkIdempotencyKey(key, "Idempotency-Key");
    const principal = c.get("principal") ?? null;
    const answer = await runIdempotent(services.deps, {
      key,
      scope: idempotencyScope(principal, clientIp(c, config)),
      endpoint: `${c.req.method} ${c.req.path}`,
      body: await bodyOf(c),
      keyId: principal?.key.id ?? null,
      callerSecret: principal ? bearerOf(c) : "",
      pepper: config.webhookEncryptionKey,
    }, async () => {
      await next();
      const res = c.res;
      const headers: [string, string][] = [];
      for (const name of REPLAYED_HEADERS) {
        const v = res.headers.get(name);
        if (v !== null) headers.push([name, v]);
      }
      // Only a 2xx is stored (and so read); an error answer passes through untouched.
      const body = res.status >= 200 && res.status < 300 ? await res.clone().text() : "";
      return { status: res.status, headers, body };
    });
    if (answer.replayed) {
      const headers = new Headers(answer.headers);
      headers.set("Idempotent-Replayed", "true");
      c.res = new Response(answer.body, { status: answer.status, headers });
    }
  };
}

/** The parsed body `jsonBody` cached (`{}` for an empty one). */
async function bodyOf(c: Context<AppEnv>): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    return null;
  }
}

function bearerOf(c: Context<AppEnv>): string {
  return /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
}
