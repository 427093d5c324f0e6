/**
 * The application layer's unit: an operation (a use case) declared once with its input schemas,
 * the actor it accepts, its result and its errors, and `execute`, the one wrapper every adapter
 * calls. The `/v1` route (routes/operation_routes.ts) and the MCP tool action
 * (routes/mcp/kit.ts) only parse, call `execute` and render; what they would otherwise each
 * re-list lives here, in one order:
 *
 * 1. authentication: a key operation refuses an anonymous actor with the adapter's precise 401;
 * 2. a sensitive write re-reads the calling key strongly (a key revoked a moment ago on another
 *    process cannot mint, buy or schedule);
 * 3. idempotency: one key namespace per operation and concrete path, shared by both adapters;
 * 4. the operation's own checks, in the order visibility → limits → funding → effect; where the
 *    operator enables machine payments, a `machinePayable` operation's 402 carries a payment
 *    challenge, and a credential that pays it runs the operation again (app/machine_payments.ts);
 * 5. after a write that changes what the account's cached keys show, those entries are dropped.
 *
 * @example
 * ```ts
 * import type { Actor } from "./actor.ts";
 * import { createProjectOp as createProject } from "./operations/projects.ts";
 * import type { Services } from "./services.ts";
 * declare const services: Services, actor: Actor;
 * const outcome = await execute(services, createProject, actor, {
 *   params: {}, query: {}, body: { url: "https://example.com" },
 * });
 * console.log(outcome.status, outcome.body);
 * ```
 *
 * @module
 */
import type { z } from "zod";
import {
  ApiError,
  checkIdempotencyKey,
  describeIssue,
  type ErrorCode,
  idempotencyScope,
  runIdempotent,
} from "../domain/platform/mod.ts";
import { expiredSandboxPrincipal } from "../domain/identity/mod.ts";
import { type AccountActor, type Actor, keyActor } from "./actor.ts";
import {
  offerFor,
  type PaymentExchange,
  RECEIPT_HEADER,
  runPayable,
  settledFromHeader,
  type SettledPayment,
} from "./machine_payments.ts";
import type { Services } from "./services.ts";

/** What an operation's `run` gets besides its input. */
export interface OperationContext<A extends Actor> {
  services: Services;
  actor: A;
  /** The public base URL (links in results). */
  baseUrl: string;
  /** A response header for adapters that have headers (`/v1`); others ignore it. */
  header(name: string, value: string): void;
  /** Overrides the operation's success status (an adopted job answers 200, not 201). */
  status(code: number): void;
  /**
   * The caller's idempotency key, when it sent one to an `idempotent` operation (a payment
   * provider's own idempotency key is derived from it).
   */
  idempotencyKey?: string;
  /**
   * The caller's machine payment credential (null without one) and where a settled payment's
   * receipt goes; `run` of a `machineSale` operation uses it (app/machine_payments.ts
   * `requestPayment`).
   */
  payment: PaymentExchange;
}

type AnyObject = z.ZodType<Record<string, unknown>>;

/** An operation's input as `run` receives it: parsed path parameters, query and body. */
export interface OperationInput<P = unknown, Q = unknown, B = unknown> {
  params: P;
  query: Q;
  body: B;
}

/** One use case. `id` is `<resource>.<verb>`; `method` and `path` are its `/v1` address. */
export interface Operation<
  P extends AnyObject = AnyObject,
  Q extends AnyObject = AnyObject,
  B extends z.ZodType = z.ZodType,
  O = unknown,
  Access extends "key" | "public" = "key" | "public",
> {
  id: string;
  method: "get" | "post" | "put" | "delete";
  /** OpenAPI-style path with `{param}` segments. */
  path: string;
  tags: string[];
  summary: string;
  description?: string;
  /** `key`: an API key is required. `public`: anyone, with or without a key. */
  access: Access;
  /**
   * What an OAuth access token (a connected MCP app, acting as the key that approved it) may do
   * here. `allow`: reads, and work that is the account's data (projects, audits, articles) or
   * ends with the grant (share links). `refuse` (403 `token_not_allowed`): anything that makes or
   * ends a credential (API keys, connected apps, signups) or would outlive the grant (webhook
   * endpoints, schedules, the billing portal). Required, so a new operation cannot forget it; the
   * README's actor table is generated from it (app/actor_table.ts).
   */
  tokens: "allow" | "refuse";
  /**
   * What a success leaves that outlives the caller's credential, for the actor table (e.g. "a
   * project, kept with the account"); absent when it leaves nothing (reads, deletions).
   */
  leaves?: string;
  /**
   * What a sandbox key meets beyond seeing only the sandbox side: refused with a code, or a
   * limit of the trial. Absent: as a live key, on the sandbox side. For the actor table, and
   * the walk of it (tests/hardening/actor_table.test.ts) checks each refusal.
   */
  sandbox?: { refuse: ErrorCode } | { limit: string };
  /**
   * What a live key meets when the operation refuses it (starting an upgrade: the account is
   * already live). Absent: served. For the actor table.
   */
  live?: { refuse: ErrorCode };
  /**
   * `admit`: a sandbox key past its expiry (not revoked) is served too, as the key it was: the
   * end of a trial is where an upgrade starts, so starting and polling one must still work.
   * Every other operation answers such a key 401 `key_expired`.
   */
  expiredSandboxKey?: "admit";
  params?: P;
  query?: Q;
  body?: B;
  /** The body may be left out (an empty body reads as `{}`); documented as not required. */
  optionalBody?: boolean;
  /** The request body's description in the document (e.g. what leaving it out means). */
  bodyDescription?: string;
  /** Status of a success, unless `run` sets another. */
  status: number;
  /**
   * Other success statuses `run` may set (`ctx.status`), each with its description; documented
   * with `output` beside `status` (a PUT: 201 created, 200 replaced).
   */
  otherStatuses?: Record<number, string>;
  /** The result's schema (documented, and the MCP output's part). */
  output: z.ZodType;
  outputDescription: string;
  /** Error codes beyond authentication and validation, for the documentation. */
  errors: ErrorCode[];
  /** Takes an idempotency key (creating operations). */
  idempotent?: boolean;
  /**
   * A live key's 402 `insufficient_credits` here may be paid by the agent itself, per job (the
   * Machine Payments Protocol, when the operator enables it): app/machine_payments.ts.
   */
  machinePayable?: boolean;
  /**
   * The operation sells something itself and may be paid in the same call (a credit pack on
   * POST /v1/upgrades, where the operator enables machine payments): the adapters pass the
   * caller's credential to `run` (`ctx.payment`), which asks `requestPayment` for the challenge
   * or the settled payment and commits what it grants.
   */
  machineSale?: boolean;
  /** Re-reads the calling key strongly before running (minting keys, money, webhooks, schedules). */
  sensitive?: boolean;
  /** Changes what the account's cached keys show (project counts, sandbox usage, keys). */
  changesAccount?: boolean;
  /**
   * The success body's media type when it is not JSON (`run` then answers a `BodyResult`): the
   * Markdown summary, the HTML report. Documented instead of `application/json`.
   */
  produces?: string;
  /**
   * Other renderings of the result `run` may answer as a `BodyResult` when its `format` query
   * parameter names one (`csv`, `ndjson`, `markdown`), each with its media type. `/v1` also picks
   * one from the `Accept` header when `format` is absent, and documents them beside the JSON.
   */
  formats?: Record<string, { contentType: string; description: string }>;
  run(
    input: OperationInput<z.output<P>, z.output<Q>, z.output<B>>,
    ctx: OperationContext<Access extends "key" ? AccountActor : Actor>,
  ): Promise<O>;
}

/**
 * A result that is a body of its own rather than JSON: a Markdown summary or an HTML report (`body`
 * a string) or an export streamed while the store is read (`body` chunks, produced only as the adapter pulls
 * them, so a 100,000-row list never sits in memory). Every check that may fail (`not_found`,
 * `invalid_state`) runs before `run` returns one, so an error still has the `/v1` shape; only
 * the rows are read lazily. `/v1` sends it as is; the MCP adapter answers JSON only
 * (routes/mcp/kit.ts `jsonResult`) except where a tool turns the text into its answer.
 */
export interface BodyResult {
  readonly kind: typeof BODY_RESULT;
  /** The media type sent as `Content-Type`, with its charset. */
  contentType: string;
  /** Offered as a download under this name (`Content-Disposition: attachment`). */
  filename?: string;
  /**
   * Or bytes made on demand (a printed PDF): `/v1` awaits them before it answers, so a failure
   * is still an error in the `/v1` shape; the MCP adapter, which answers an address, never asks.
   */
  body: string | AsyncIterable<string> | (() => Promise<Uint8Array>);
}

const BODY_RESULT = "serpwright.body" as const;

/** A body result (see `BodyResult`). */
export function bodyResult(
  contentType: string,
  body: BodyResult["body"],
  filename?: string,
): BodyResult {
  return { kind: BODY_RESULT, contentType, body, ...(filename ? { filename } : {}) };
}

/** Whether `run` answered a body rather than a JSON result. */
export function isBodyResult(value: unknown): value is BodyResult {
  return typeof value === "object" && value !== null &&
    (value as { kind?: unknown }).kind === BODY_RESULT;
}

/**
 * Declares an operation with its types inferred from its schemas. One rule for every body: an
 * object body refuses unknown fields (400 `invalid_request` naming the field, on `/v1` and MCP
 * alike, and `additionalProperties: false` in the document), so a misspelt option is never
 * silently ignored. A body schema that would accept them (not `.strict()`) is a programming
 * error, refused here when its module loads.
 */
export function defineOperation<
  P extends AnyObject = z.ZodObject<Record<string, never>>,
  Q extends AnyObject = z.ZodObject<Record<string, never>>,
  B extends z.ZodType = z.ZodType<Record<string, never>>,
  O = unknown,
  Access extends "key" | "public" = "key",
>(op: Operation<P, Q, B, O, Access>): Operation<P, Q, B, O, Access> {
  if (op.body && admitsUnknownFields(op.body)) {
    throw new Error(`operation ${op.id}: its body must be .strict() (unknown fields refused)`);
  }
  return op;
}

/**
 * Whether an object schema accepts fields it does not declare: a zod object without a `never`
 * catch-all (`.strict()` sets one). Schemas that are not objects answer false.
 */
export function admitsUnknownFields(schema: z.ZodType): boolean {
  const def = (schema as unknown as {
    _zod?: { def?: { type?: string; catchall?: { _zod?: { def?: { type?: string } } } } };
  })._zod?.def;
  if (def?.type !== "object") return false;
  return def.catchall?._zod?.def?.type !== "never";
}

/** How an adapter calls `execute`. */
export interface ExecuteOptions {
  /** The idempotency key sent, and the field it came in (named in a 400). */
  idempotencyKey?: { value: string; field: string };
  /** The raw bearer the actor was resolved from: seals stored replays (never stored itself). */
  bearer?: string | null;
  /** Why a presented key did not resolve: a key operation answers it instead of a bare 401. */
  authError?: Error | null;
  /** Receives response headers (`/v1` only). */
  header?(name: string, value: string): void;
  /**
   * The machine payment credential the caller sent (`takesPayment` operations), or null;
   * a settled payment comes back as the outcome's `payment`.
   */
  paymentCredential?: string | null;
}

/** A finished operation: its status, result, and whether the result is a stored replay. */
export interface Outcome<O> {
  status: number;
  body: O;
  replayed: boolean;
  /** The machine payment this run settled (or, replayed, the one its first run settled). */
  payment?: SettledPayment;
}

/** Runs `op` for `actor` through the shared steps (module doc). */
export async function execute<O>(
  services: Services,
  // deno-lint-ignore no-explicit-any
  op: Operation<any, any, any, O, any>,
  actor: Actor,
  input: OperationInput,
  options: ExecuteOptions = {},
): Promise<Outcome<O>> {
  const expired = op.expiredSandboxKey === "admit"
    ? expiredSandboxPrincipal(options.authError)
    : null;
  if (expired && actor.kind === "anonymous") actor = keyActor(expired, actor.ip);
  if (op.access === "key" && actor.kind !== "account") {
    throw options.authError ??
      new ApiError("unauthorized", "Missing Authorization header; expected 'Bearer <API_KEY>'");
  }
  if (op.tokens === "refuse" && actor.kind === "account" && actor.credential.kind === "token") {
    throw tokenRefused(op);
  }
  let current = actor;
  if (op.sensitive && current.kind === "account" && current.principal) {
    // The strong re-read is the key's; a token's view keeps its grant.
    const fresh = await services.resolver.confirm(current.principal).catch((err) => {
      const still = op.expiredSandboxKey === "admit" ? expiredSandboxPrincipal(err) : null;
      if (still) return still;
      throw err;
    });
    const { grant } = current.principal;
    current = { ...current, principal: grant ? { ...fresh, grant } : fresh };
  }
  let status = op.status;
  const key = op.idempotent ? options.idempotencyKey : undefined;
  let payment: SettledPayment | undefined;
  const exchange: PaymentExchange = {
    credential: options.paymentCredential ?? null,
    receipt: (paid) => void (payment = paid),
  };
  const ctx: OperationContext<Actor> = {
    services,
    actor: current,
    baseUrl: services.deps.config.publicBaseUrl,
    header: (name, value) => options.header?.(name, value),
    status: (code) => void (status = code),
    ...(key ? { idempotencyKey: key.value } : {}),
    payment: exchange,
  };
  const path = concretePath(op.path, input.params);
  const run = async (): Promise<Outcome<O>> => {
    const body = op.machinePayable
      ? await runPayable(
        services,
        (err) => offerFor(op, current, path, err),
        exchange,
        () => op.run(input, ctx),
      )
      : await op.run(input, ctx);
    if (op.changesAccount && current.kind === "account") {
      services.resolver.invalidateAccount(current.accountId);
    }
    return { status, body, replayed: false, ...(payment ? { payment } : {}) };
  };
  if (key === undefined) return await run();

  checkIdempotencyKey(key.value, key.field);
  let fresh: Outcome<O> | null = null;
  const principal = current.kind === "account" ? current.principal : null;
  const answer = await runIdempotent(services.deps, {
    key: key.value,
    scope: idempotencyScope(principal, current.ip ?? ""),
    endpoint: `${op.method.toUpperCase()} ${path}`,
    body: input.body ?? {},
    keyId: current.kind === "account" ? current.keyId : null,
    callerSecret: principal ? options.bearer ?? "" : "",
    pepper: services.deps.config.webhookEncryptionKey,
  }, async () => {
    const done = fresh = await run();
    if (isBodyResult(done.body)) throw new Error(`${op.id}: a body result cannot be replayed`);
    return {
      status: done.status,
      headers: [
        ["content-type", "application/json"],
        // A replay hands back the receipt of the payment its first run settled.
        ...(done.payment ? [[RECEIPT_HEADER, done.payment.header] as [string, string]] : []),
      ],
      body: JSON.stringify(done.body),
    };
  });
  // A first run answers its own result; only a stored answer is parsed back.
  if (fresh && !answer.replayed) return fresh;
  const receipt = answer.headers.find(([name]) => name === RECEIPT_HEADER)?.[1];
  const settled = receipt ? await settledFromHeader(services, receipt) : null;
  return {
    status: answer.status,
    body: JSON.parse(answer.body) as O,
    replayed: answer.replayed,
    ...(settled ? { payment: settled } : {}),
  };
}

/** Whether the adapters read a payment credential for `op` (per job, or a sale of its own). */
export function takesPayment(op: { machinePayable?: boolean; machineSale?: boolean }): boolean {
  return op.machinePayable === true || op.machineSale === true;
}

/** The 403 a connected app's token meets at an operation closed to tokens. */
export function tokenRefused(op: { id: string; summary: string }): ApiError {
  return new ApiError(
    "token_not_allowed",
    `A connected app (OAuth access token) cannot do this: ${op.summary} (${op.id}). It makes ` +
      "or ends a credential, or leaves something that would outlive the app's access; use an " +
      "API key (Authorization: Bearer sk_…).",
    { operation: op.id },
  );
}

/** `/v1/projects/{projectId}/audits` with its parameters filled in. */
export function concretePath(path: string, params: unknown): string {
  const values = (params ?? {}) as Record<string, unknown>;
  return path.replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? ""));
}

/**
 * Parses raw adapter input with the operation's schemas, answering `invalid_request` naming the
 * first failing field as `/v1` does.
 */
export function parseInput(
  // deno-lint-ignore no-explicit-any
  op: Operation<any, any, any, any, any>,
  raw: Partial<OperationInput>,
): OperationInput {
  const part = (schema: z.ZodType | undefined, value: unknown, where: string) => {
    if (!schema) return {};
    const r = schema.safeParse(value ?? {});
    if (!r.success) throw new ApiError("invalid_request", describeIssue(r.error.issues, where));
    return r.data;
  };
  return {
    params: part(op.params, raw.params, "path"),
    query: part(op.query, raw.query, "query"),
    body: part(op.body, withoutUndefined(raw.body), "body"),
  };
}

function withoutUndefined(value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}
