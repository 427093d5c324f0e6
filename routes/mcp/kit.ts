/**
 * The shape every Serpwright tool shares: zod input and output schemas (the `/v1` ones where they
 * exist), converted to JSON Schema once per process; argument validation that answers
 * `invalid_request` like `/v1`; errors as tool errors carrying the API's `error.code`, message and
 * doc URL; results as `structuredContent` plus a short text rendering.
 */
import type { McpServer, StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { z } from "zod";
import { type Actor, anonymousActor, keyActor } from "../../app/actor.ts";
import {
  type BodyResult,
  concretePath,
  execute,
  isBodyResult,
  type Operation,
  type OperationInput,
  parseInput,
  takesPayment,
} from "../../app/operation.ts";
import {
  credentialFromMcp,
  MachinePaymentRequired,
  MCP_META,
  mcpReceipt,
} from "../../app/machine_payments.ts";
import { ApiError, describeIssue, ERROR_CODES, type ErrorCode } from "../../domain/platform/mod.ts";
import type { Services } from "../env.ts";
import { errorBody, toApiError } from "../middleware/errors.ts";
import { callerOf, type McpCaller } from "./caller.ts";

/** What a tool's `run` gets besides its arguments. */
export interface ToolContext {
  services: Services;
  caller: McpCaller;
  /** Who the call runs for, as the application layer sees every caller. */
  actor: Actor;
  baseUrl: string;
  /** Sends `notifications/progress` when the client asked for progress; a no-op otherwise. */
  progress(progress: number, total: number | undefined, message: string): Promise<void>;
  /** Aborted when the client cancels the call or goes away. */
  signal: AbortSignal;
  /** Adds a line to the answer's text, after the summary (e.g. why a `wait` was not held). */
  note(text: string): void;
  /**
   * The call may be answered with a task handle (`ToolAnswer.task`): a 2026-07-28 call whose
   * client declared the tasks extension, answered by the route's direct path (fast_call.ts). The
   * SDK's `McpServer` checks every result of a tool with an output schema as a `CallToolResult`,
   * which a handle is not, so a call the SDK answers gets the ordinary result: the extension
   * leaves the choice to the server, per request.
   */
  tasks: boolean;
  /**
   * A machine payment credential the call carries (`_meta["org.paymentauth/credential"]`, as
   * mppx's MCP client sends it), for a start that answered a payment challenge.
   */
  payment?: unknown;
}

/** A tool's answer: the machine-readable result and a short line or two for the model to read. */
export interface ToolAnswer {
  structured: Record<string, unknown>;
  summary: string;
  /**
   * A task handle (the fields of a 2026-07-28 `CreateTaskResult` but `resultType`), answered
   * instead of the result; set only when `ToolContext.tasks` allows it.
   */
  task?: Record<string, unknown>;
  /** The result's `_meta` (a machine payment's receipt). */
  meta?: Record<string, unknown>;
  /** Rows of a listing as short lines, after the summary (a few, never the whole data). */
  lines?: string[];
  /**
   * The REST address of the same data (`GET https://…/v1/…`), named on the text's last line;
   * `runAction` sets the operation's own when the answer names none.
   */
  rest?: string;
}

export interface ToolDef<I extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: z.ZodType;
  /**
   * `public`: listed for everyone (signup, docs). `key`: only with an API key. `anonymous`: only
   * without one (the public face of a tool whose keyed twin shares its name).
   */
  access: "public" | "key" | "anonymous";
  annotations: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean };
  /** The tool's `_meta` in `tools/list` (an MCP App's `ui.resourceUri`, apps.ts). */
  meta?: Record<string, unknown>;
  run(args: z.output<I>, ctx: ToolContext): Promise<ToolAnswer>;
}

interface CompiledTool {
  def: ToolDef;
  inputSchema: StandardSchemaWithJSON;
}

const TARGET = "draft-2020-12" as const;

/**
 * A Standard Schema whose JSON Schema is computed once. Input validation is done by the tool
 * wrapper (so failures carry `invalid_request`), hence `validateInput: false`; outputs are
 * validated by the SDK against the zod schema before they leave.
 */
function standard(schema: z.ZodType, validate: boolean): StandardSchemaWithJSON {
  // Without `$schema` (draft 2020-12 is the MCP default): bytes every host sends to its model.
  const { $schema: _i, ...input } = z.toJSONSchema(schema, {
    target: TARGET,
    io: "input",
    unrepresentable: "any",
  });
  const { $schema: _o, ...output } = z.toJSONSchema(schema, {
    target: TARGET,
    io: "output",
    unrepresentable: "any",
  });
  lean(input);
  lean(output);
  return {
    "~standard": {
      version: 1,
      vendor: "serpwright",
      validate: (value: unknown) => {
        if (!validate) return { value };
        const r = schema.safeParse(value);
        return r.success ? { value: r.data } : {
          issues: r.error.issues.map((i) => ({
            message: i.message,
            path: i.path as PropertyKey[],
          })),
        };
      },
      jsonSchema: { input: () => input, output: () => output },
    },
  } as unknown as StandardSchemaWithJSON;
}

/** Drops zod's safe-integer bounds (`z.number().int()`'s ±2^53-1), which say nothing to a model. */
function lean(node: unknown): void {
  if (node === null || typeof node !== "object") return;
  const o = node as Record<string, unknown>;
  if (o.minimum === Number.MIN_SAFE_INTEGER) delete o.minimum;
  if (o.maximum === Number.MAX_SAFE_INTEGER) delete o.maximum;
  for (const v of Object.values(o)) lean(v);
}

/**
 * Compiles tool definitions once per process; the per-request factory only registers them.
 * Tools list no output schema (issue 33): `structuredContent` is the `/v1` body of the same call,
 * documented by the OpenAPI document, and the schemas were most of `tools/list` (the audits
 * tool's alone was 17 KB) while no host we know of shows them to the model. `def.output` stays
 * as the tools' own record of what they answer.
 */
export function compileTools(defs: ToolDef[]): CompiledTool[] {
  return defs.map((def) => ({ def, inputSchema: standard(def.input, false) }));
}

// deno-lint-ignore no-explicit-any
type SdkContext = any;

/** Registers compiled tools on a per-request server instance. */
export function registerTools(
  server: McpServer,
  tools: CompiledTool[],
  services: Services,
  caller: McpCaller,
): void {
  const baseUrl = services.deps.config.publicBaseUrl;
  const listed = (def: ToolDef) =>
    def.access === "public" || (def.access === "key") === (caller.principal !== null);
  // A call of a tool this caller has gets only that tool; any other call (an unknown name) gets
  // them all, so the SDK answers "Tool … not found" as usual.
  const only = tools.some((t) => t.def.name === caller.toolCall && listed(t.def))
    ? caller.toolCall
    : null;
  for (const { def, inputSchema } of tools) {
    if (!listed(def) || (only !== null && def.name !== only)) continue;
    server.registerTool(
      def.name,
      {
        title: def.title,
        description: def.description,
        inputSchema,
        annotations: { ...def.annotations, openWorldHint: false },
        ...(def.meta ? { _meta: def.meta } : {}),
      },
      (async (args: unknown, sdk: SdkContext) => {
        const who = sdk?.http?.authInfo ? callerOf(sdk.http.authInfo) : caller;
        if (who.rateLimited) return toolError(baseUrl, who.rateLimited);
        const parsed = def.input.safeParse(args ?? {});
        if (!parsed.success) {
          return toolError(
            baseUrl,
            new ApiError("invalid_request", describeArguments(parsed.error)),
          );
        }
        const { ctx, notes } = toolContext(services, who, sdk);
        try {
          const answer = await def.run(parsed.data, ctx);
          if (answer.task && ctx.tasks) return { ...answer.task, resultType: "task" };
          return toolResult(answer, notes);
        } catch (err) {
          const apiError = toApiError(err);
          if (apiError.status >= 500) {
            console.error(JSON.stringify({
              level: "error",
              msg: "mcp tool failed",
              tool: def.name,
              error: err instanceof ApiError ? err.message : String((err as Error)?.stack ?? err),
            }));
          }
          return toolError(baseUrl, apiError);
        }
        // deno-lint-ignore no-explicit-any
      }) as any,
    );
  }
}

/**
 * The context of one call of `who`: `sdk` is the SDK's handler context (or the direct path's
 * stand-in for it, fast_call.ts). `notes` collects what `ctx.note` adds to the answer's text.
 */
export function toolContext(
  services: Services,
  who: McpCaller,
  sdk: SdkContext,
): { ctx: ToolContext; notes: string[] } {
  const token = sdk?.mcpReq?._meta?.progressToken;
  const notes: string[] = [];
  let signal: AbortSignal | undefined;
  const ctx: ToolContext = {
    services,
    caller: who,
    actor: who.principal ? keyActor(who.principal, who.ip) : anonymousActor(who.ip),
    baseUrl: services.deps.config.publicBaseUrl,
    // On first use: only a waiting call needs it, and a request's signal is not free.
    get signal() {
      return signal ??= sdk?.mcpReq?.signal ?? new AbortController().signal;
    },
    note: (text) => void notes.push(text),
    progress: async (progress, total, message) => {
      if (token === undefined) return;
      await sdk.mcpReq.notify({
        method: "notifications/progress",
        params: { progressToken: token, progress, ...(total ? { total } : {}), message },
      });
    },
    tasks: sdk?.taskHandles === true,
    payment: sdk?.mcpReq?._meta?.[MCP_META.credential],
  };
  return { ctx, notes };
}

/**
 * A tool's answer as a `CallToolResult`: the text rendering (for the model) and the structured
 * result (the data, once, as `/v1` answers it).
 */
export function toolResult(answer: ToolAnswer, notes: string[] = []) {
  return {
    content: [{ type: "text" as const, text: render(answer, notes) }],
    structuredContent: answer.structured,
    ...(answer.meta ? { _meta: answer.meta } : {}),
  };
}

/**
 * The compact rendering a model reads: the summary (with the next step), any notes, the rows as
 * short lines, and the REST address of the same data. Never the JSON again: hosts that show the
 * model only `content` get what it needs, and the data rides once, in `structuredContent`.
 */
export function render(answer: ToolAnswer, notes: string[] = []): string {
  return [
    answer.summary,
    ...notes,
    ...(answer.lines?.length ? answer.lines.map((l) => `- ${l}`) : []),
    ...(answer.rest ? [`REST: ${answer.rest}`] : []),
  ].join("\n");
}

/** What to do next, in tool terms, where the API's own advice names an HTTP endpoint. */
const TOOL_ACTIONS: Partial<Record<ErrorCode, string>> = {
  key_limit_reached: "Revoke a key you no longer use (api_keys, action revoke), then create one.",
  cannot_revoke_last_key: "Create a new key first (api_keys, action create), then revoke the old.",
  unauthorized: "Configure the MCP host with the header `Authorization: Bearer <API_KEY>`; " +
    "get a key with the signup tool.",
  insufficient_credits: "Buy a credit pack (billing, action buy_credits) and hand the human the " +
    "checkout_url, or subscribe the project (billing, action subscribe).",
  payment_required: "Use a live key with credits, or subscribe the project " +
    "(billing, action subscribe, with a live key). With a sandbox key: billing, action upgrade.",
  sandbox_limit_reached: "Start an upgrade (billing, action upgrade), hand a human its " +
    "verification_uri_complete, then poll (billing, action upgrade_status) for the live key.",
  not_found: "Check the id; list the resources (action list) to find it.",
  audit_in_progress: "Poll the running audit (audits, action get, with the audit_id of the " +
    "error) until it completes, then start again; or start with the same options to get it.",
  article_in_progress: "Poll the running article (articles, action get) until it is ready or " +
    "failed, then try again.",
  idempotency_conflict: "Use a fresh idempotency_key for a new operation; retry the same " +
    "operation later to get its stored answer.",
  limit_reached: "Delete a webhook endpoint you no longer use (webhooks, action delete), or " +
    "revoke a share link (audits or articles, action revoke_share).",
  rate_limited: "Wait retry_after_seconds, then call again.",
  internal_error: "Retry the call with the same idempotency_key; it is safe.",
};

/**
 * An API error as an MCP tool error: `isError`, advice in the text, and the `/v1` error body
 * (`{error: {code, message, doc_url}, ...}`) both as the text's last line and in `_meta`.
 */
export function toolError(baseUrl: string, err: ApiError) {
  const body: Record<string, unknown> = errorBody(baseUrl, err);
  const retryAfter = err.headers?.["Retry-After"];
  if (retryAfter) body.retry_after_seconds = Number(retryAfter);
  const known = ERROR_CODES[err.code as ErrorCode];
  const advice = TOOL_ACTIONS[err.code as ErrorCode] ?? known?.action;
  // A payable 402: the challenge in the body (`machine_payment`) and where mppx's MCP client
  // looks for it (`_meta["org.paymentauth/payment-required"]`).
  const challenges = err instanceof MachinePaymentRequired ? [err.issued.challenge] : null;
  if (challenges) body.machine_payment = { challenges, credential_meta: MCP_META.credential };
  const text = [
    `Error ${err.code}: ${err.message}`,
    advice ? `What to do: ${advice}` : null,
    challenges ? `Or pay it yourself: ${PAY_PER_JOB}` : null,
    `Docs: ${baseUrl}/docs/errors#${err.code}`,
    `\n${JSON.stringify(body)}`,
  ].filter(Boolean).join("\n");
  // Not in structuredContent: clients on the 2025 SDKs validate it against the output schema even
  // on errors, so the body rides in the text (its last line) and in `_meta`.
  return {
    content: [{ type: "text" as const, text }],
    _meta: {
      [ERROR_META]: body,
      ...(challenges ? { [MCP_META.paymentRequired]: { httpStatus: 402, challenges } } : {}),
    },
    isError: true,
  };
}

const PAY_PER_JOB = "answer machine_payment.challenges[0] (Machine Payments Protocol, Stripe " +
  'method) and repeat the call with the credential in _meta["org.paymentauth/credential"] ' +
  "(mppx's MCP client does this); the receipt comes back in the result's _meta.";

/** Where a tool error's `/v1` error body sits in the result's `_meta`. */
export const ERROR_META = "com.serpwright/error";

/** "field: what is wrong" for the first failed check, as `/v1` words validation errors. */
function describeArguments(error: z.ZodError): string {
  return describeIssue(error.issues, "arguments", "Invalid arguments");
}

/** Throws `invalid_request` naming the field an action needs. */
export function required<T>(value: T | undefined, field: string, action: string): T {
  if (value === undefined) {
    throw new ApiError("invalid_request", `${field}: required for action '${action}'`);
  }
  return value;
}

/**
 * The text of an operation that answers a document rather than JSON (the Markdown summary, the
 * HTML report), for a tool to hand back as its answer.
 */
export function bodyText(result: unknown): string {
  return isBodyResult(result) && typeof result.body === "string" ? result.body : "";
}

/**
 * An operation's JSON result. Tools answer JSON: a file the operation would stream (a CSV or
 * NDJSON export) is refused with `invalid_request` naming the `/v1` address that serves it. The
 * checks of the operation (not_found, invalid_state) have run by then, as over `/v1`.
 */
export function jsonResult<O>(result: O | BodyResult, download: string): O {
  if (!isBodyResult(result)) return result;
  throw new ApiError(
    "invalid_request",
    `format: this tool answers JSON pages; download the whole list as a file from ${download} ` +
      "with the same API key",
  );
}

/** Validates the fields an action takes with the `/v1` body schema, so the rules are the same. */
export function asBody<S extends z.ZodType>(
  schema: S,
  fields: Record<string, unknown>,
): z.output<S> {
  const body = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  const r = schema.safeParse(body);
  if (!r.success) throw new ApiError("invalid_request", describeArguments(r.error));
  return r.data;
}

/** The idempotency key argument shared by creating tools. */
export const IdempotencyKeyArg = z.string().min(1).max(200).optional().describe(
  "Fresh per operation; a retry with it is safe (24 h)",
);

// deno-lint-ignore no-explicit-any
type AnyOperation<O = any> = Operation<any, any, any, O, any>;

/** How the operation of an action ended besides its result: its status (201 created, 200 …). */
export interface ActionOutcome {
  status: number;
}

/**
 * One action of a tool: the application-layer operation it runs, that operation's input built
 * from the tool's arguments, and the tool's answer built from the operation's result (and, where
 * the status tells something the result does not, its outcome).
 */
export interface ToolAction<A, O = unknown> {
  op: AnyOperation<O>;
  input(args: A): Partial<OperationInput>;
  answer(
    result: O,
    args: A,
    ctx: ToolContext,
    outcome: ActionOutcome,
  ): ToolAnswer | Promise<ToolAnswer>;
}

/** Binds an operation as a tool action (types inferred from the operation). */
export function action<A, O>(
  op: AnyOperation<O>,
  input: (args: A) => Partial<OperationInput>,
  answer: (
    result: O,
    args: A,
    ctx: ToolContext,
    outcome: ActionOutcome,
  ) => ToolAnswer | Promise<ToolAnswer>,
): ToolAction<A, O> {
  return { op, input, answer };
}

/**
 * Runs an action through the application layer's `execute`, as the `/v1` route runs the same
 * operation: the same input schemas, idempotency namespace, checks and result.
 */
export async function runAction<A extends { idempotency_key?: string }>(
  // deno-lint-ignore no-explicit-any
  binding: ToolAction<A, any>,
  args: A,
  ctx: ToolContext,
): Promise<ToolAnswer> {
  const input = parseInput(binding.op, binding.input(args));
  const key = args.idempotency_key;
  const outcome = await execute(ctx.services, binding.op, ctx.actor, input, {
    idempotencyKey: key === undefined ? undefined : { value: key, field: "idempotency_key" },
    bearer: ctx.caller.bearer,
    ...(takesPayment(binding.op)
      ? { paymentCredential: await credentialFromMcp(ctx.services, ctx.payment) }
      : {}),
  });
  const reply = await binding.answer(outcome.body, args, ctx, { status: outcome.status });
  const answered = reply.rest ? reply : { ...reply, rest: restAddress(ctx, binding.op, input) };
  const answer = outcome.payment
    ? { ...answered, meta: { ...answered.meta, ...mcpReceipt(outcome.payment) } }
    : answered;
  if (!outcome.replayed) return answer;
  return { ...answer, structured: { ...answer.structured, idempotent_replayed: true } };
}

/** `GET https://…/v1/…?query` of an operation's input: the REST address of the same call. */
export function restAddress(
  ctx: Pick<ToolContext, "baseUrl">,
  op: Pick<AnyOperation, "method" | "path">,
  input: Partial<OperationInput>,
): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries((input.query ?? {}) as Record<string, unknown>)) {
    if (v !== undefined && v !== null) query.set(k, String(v));
  }
  const q = query.size ? `?${query}` : "";
  return `${op.method.toUpperCase()} ${ctx.baseUrl}${concretePath(op.path, input.params)}${q}`;
}

/** A tool whose `action` argument picks one of its operations. */
export type ActionToolDef<I extends z.ZodType> = ToolDef<I> & {
  // deno-lint-ignore no-explicit-any
  actions: Record<string, ToolAction<z.output<I>, any>>;
};

/**
 * Declares a tool whose every action is an operation; `run` dispatches on `args.action`.
 * The operations a tool reaches are listed by `actions` (the parity test walks them).
 */
export function actionTool<I extends z.ZodType<{ action: string; idempotency_key?: string }>>(
  def: Omit<ToolDef<I>, "run"> & {
    // deno-lint-ignore no-explicit-any
    actions: Record<z.output<I>["action"], ToolAction<z.output<I>, any>>;
  },
): ActionToolDef<I> {
  return {
    ...def,
    run: (args, ctx) => {
      const binding = def.actions[args.action as z.output<I>["action"]];
      return runAction(binding, args, ctx);
    },
  };
}

/** A tool that is one operation (no `action` argument): `signup`, `account`. */
export function operationTool<I extends z.ZodType<{ idempotency_key?: string }>>(
  def: Omit<ToolDef<I>, "run">,
  // deno-lint-ignore no-explicit-any
  binding: ToolAction<z.output<I>, any>,
): ActionToolDef<I> {
  return {
    ...def,
    actions: { [def.name]: binding },
    run: (args, ctx) => runAction(binding, args, ctx),
  };
}
