/**
 * The `/v1` adapter of the application layer: each operation becomes one documented route that
 * validates its path, query and body with the operation's schemas, calls `execute` and renders
 * the outcome as JSON. Nothing operation-specific lives here.
 *
 * @module
 */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { type AccountActor, anonymousActor, keyActor } from "../app/actor.ts";
import { CREDENTIAL_HEADER, RECEIPT_HEADER } from "../app/machine_payments.ts";
import { execute, isBodyResult, type Operation, takesPayment } from "../app/operation.ts";
import { checkIdempotencyKey } from "../domain/platform/mod.ts";
import { bodyResponse, negotiateFormat } from "./body_result.ts";
import type { AppEnv, Services } from "./env.ts";
import { requireKey } from "./middleware/auth.ts";
import { clientIp } from "./middleware/request_id.ts";
import {
  AUTH_ERRORS,
  bearerSecurity,
  IdempotencyHeader,
  PayableHeaders,
  responses,
} from "./openapi_helpers.ts";

const BEARER = /^Bearer (.+)$/;

// deno-lint-ignore no-explicit-any
type AnyOperation = Operation<any, any, any, any, any>;

/** The actor of a `/v1` request: its resolved key, or anonymous. */
export function actorOf(c: Context<AppEnv>, s: Services):
  | AccountActor
  | ReturnType<
    typeof anonymousActor
  > {
  const ip = clientIp(c, s.deps.config);
  const principal = c.get("principal");
  return principal ? keyActor(principal, ip) : anonymousActor(ip);
}

/** Registers every operation as its `/v1` route. */
export function mountOperations(
  app: OpenAPIHono<AppEnv>,
  s: Services,
  operations: readonly AnyOperation[],
): void {
  for (const op of operations) mountOperation(app, s, op);
}

function mountOperation(app: OpenAPIHono<AppEnv>, s: Services, op: AnyOperation): void {
  const keyed = op.access === "key";
  const errors = [
    ...(keyed ? AUTH_ERRORS : op.errors.includes("rate_limited") ? [] : ["rate_limited" as const]),
    ...op.errors,
  ];
  // The success status, and any other one `run` may set, each documented with the result's schema.
  const media = { produces: op.produces, formats: op.formats };
  const success = {
    [op.status]: { description: op.outputDescription, schema: op.output, ...media },
  };
  for (const [status, description] of Object.entries(op.otherStatuses ?? {})) {
    success[Number(status)] = { description, schema: op.output, ...media };
  }
  const route = createRoute({
    method: op.method,
    path: op.path,
    tags: op.tags,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(keyed ? { security: bearerSecurity } : {}),
    middleware: [
      ...(keyed ? [requireKey({ expiredSandbox: op.expiredSandboxKey === "admit" })] : []),
      ...(op.idempotent ? [idempotencyKeyBounds] : []),
    ],
    request: {
      ...(op.params ? { params: op.params } : {}),
      ...(op.query ? { query: op.query } : {}),
      ...(op.idempotent ? { headers: takesPayment(op) ? PayableHeaders : IdempotencyHeader } : {}),
      ...(op.body
        ? {
          body: {
            content: { "application/json": { schema: op.body } },
            required: !op.optionalBody,
            ...(op.bodyDescription ? { description: op.bodyDescription } : {}),
          },
        }
        : {}),
    },
    responses: responses(success, errors, { payable: takesPayment(op) }),
  });
  // deno-lint-ignore no-explicit-any
  app.openapi(route as any, async (c: any) => {
    const ctx = c as Context<AppEnv>;
    const key = ctx.req.header("idempotency-key");
    const query = op.query ? { ...c.req.valid("query") } : {};
    // `format` wins; without it, `Accept` may pick one of the operation's other formats.
    if (op.formats && query.format === undefined) {
      query.format = negotiateFormat(ctx.req.header("accept"), op.formats);
    }
    const outcome = await execute(s, op, actorOf(ctx, s), {
      params: op.params ? c.req.valid("param") : {},
      query,
      // An optional body left out is not validated: it reads as `{}`.
      body: op.body ? c.req.valid("json") ?? {} : {},
    }, {
      idempotencyKey: key === undefined ? undefined : { value: key, field: "Idempotency-Key" },
      bearer: BEARER.exec(ctx.req.header("authorization") ?? "")?.[1] ?? null,
      authError: ctx.get("authError"),
      header: (name, value) => ctx.header(name, value),
      ...(takesPayment(op) ? { paymentCredential: ctx.req.header(CREDENTIAL_HEADER) ?? null } : {}),
    });
    if (outcome.replayed) ctx.header("Idempotent-Replayed", "true");
    // A started job (202) says when to poll, from its body's estimate (replays too).
    const poll = (outcome.body as { poll_after_seconds?: unknown } | null)?.poll_after_seconds;
    if (outcome.status === 202 && typeof poll === "number") {
      ctx.header("Retry-After", String(poll));
    }
    if (outcome.payment) ctx.header(RECEIPT_HEADER, outcome.payment.header);
    if (isBodyResult(outcome.body)) return await bodyResponse(ctx, outcome.body, outcome.status);
    return ctx.json(outcome.body as object, outcome.status as 200);
  });
}

/**
 * A malformed Idempotency-Key is refused before the body is validated, in the words the MCP
 * `idempotency_key` gets (`execute` checks it again for adapters without headers).
 */
const idempotencyKeyBounds: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = c.req.header("idempotency-key");
  if (key !== undefined) checkIdempotencyKey(key, "Idempotency-Key");
  await next();
};
