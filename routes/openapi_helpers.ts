import { z } from "@hono/zod-openapi";
import { ERROR_CODES, type ErrorCode } from "../domain/platform/mod.ts";

/** The base URL the document's examples use: the `deno task dev` server. */
const EXAMPLE_BASE = "http://localhost:8000";

export const ErrorSchema = z.object({
  error: z.object({
    code: z.string().openapi({
      description: "Stable machine-readable code; branch on it. Every code is on /docs/errors.",
      example: "invalid_request",
    }),
    message: z.string().openapi({ example: "email: Invalid email address" }),
    doc_url: z.string().openapi({
      description: "The code's entry on the error reference: `<base>/docs/errors#<code>`",
      example: `${EXAMPLE_BASE}/docs/errors#invalid_request`,
    }),
  }),
}).passthrough().openapi("Error");

const rateHeaders = {
  "X-RateLimit-Limit": {
    schema: { type: "integer" as const },
    description: "Requests allowed in the window",
  },
  "X-RateLimit-Remaining": {
    schema: { type: "integer" as const },
    description: "Requests left in the window",
  },
  "X-RateLimit-Reset": {
    schema: { type: "integer" as const },
    description: "Unix time (s) the window resets",
  },
};

/** Codes every authenticated endpoint may answer. */
export const AUTH_ERRORS: ErrorCode[] = [
  "unauthorized",
  "key_revoked",
  "key_expired",
  "rate_limited",
];

const replayedHeader = {
  "Idempotent-Replayed": {
    schema: { type: "string" as const, enum: ["true"] },
    description: "Present (`true`) when this is the stored response of an earlier request with " +
      "the same Idempotency-Key, replayed verbatim instead of running again",
  },
};

/**
 * The `responses` object of a route: its success response and one entry per error status, each
 * listing the codes it carries. Rate-limit headers on all of them; `Idempotent-Replayed` on the
 * success of every operation that takes an Idempotency-Key (those that can answer
 * `idempotency_conflict`); 405 `method_not_allowed` on every operation, since its path answers
 * any other method with it (and `Allow`). A success is JSON unless it names another
 * `contentType` (the HTML report); errors are always JSON.
 */
export function responses(
  success: Record<number, SuccessBody>,
  errors: ErrorCode[],
  options: { payable?: boolean } = {},
) {
  const out: Record<string, unknown> = {};
  const idempotent = errors.includes("idempotency_conflict");
  for (const [status, s] of Object.entries(success)) {
    out[status] = {
      description: s.description,
      headers: {
        ...rateHeaders,
        ...(idempotent ? replayedHeader : {}),
        ...(options.payable ? receiptHeader : {}),
      },
      content: successContent(s),
    };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  const always: ErrorCode[] = ["invalid_request", "method_not_allowed", "internal_error"];
  for (const code of new Set<ErrorCode>([...errors, ...always])) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const retry = status === 429
      ? { "Retry-After": { schema: { type: "integer" as const }, description: "Seconds to wait" } }
      : status === 405
      ? {
        Allow: {
          schema: { type: "string" as const },
          description: "The methods this path answers",
        },
      }
      : status === 402 && options.payable
      ? challengeHeader
      : {};
    out[String(status)] = {
      description: codes.map((code) => `\`${code}\`: ${ERROR_CODES[code].meaning}`).join(" "),
      headers: { ...rateHeaders, ...retry },
      content: {
        "application/json": {
          schema: ErrorSchema,
          // One example per code, from the same table the error reference page is built from.
          examples: Object.fromEntries(codes.map((code) => [code, {
            summary: ERROR_CODES[code].meaning,
            value: {
              error: {
                code,
                message: ERROR_CODES[code].meaning,
                doc_url: `${EXAMPLE_BASE}/docs/errors#${code}`,
              },
            },
          }])),
        },
      },
    };
  }
  // deno-lint-ignore no-explicit-any
  return out as any;
}

/** A success response: its schema, and any other media types it may come as. */
export interface SuccessBody {
  description: string;
  schema: z.ZodType;
  /** The one media type of a text result (the schema is then a string). */
  produces?: string;
  /** Other renderings chosen by `format` or `Accept` (app/operation.ts `formats`). */
  formats?: Record<string, { contentType: string; description: string }>;
}

/** The `content` of a success: JSON (or the text's own type), then the other formats as text. */
function successContent(s: SuccessBody): Record<string, unknown> {
  const content: Record<string, unknown> = {
    [(s.produces ?? "application/json").split(";")[0]]: { schema: s.schema },
  };
  for (const [name, f] of Object.entries(s.formats ?? {})) {
    content[f.contentType.split(";")[0]] = {
      schema: { type: "string", description: `\`format=${name}\`: ${f.description}` },
    };
  }
  return content;
}

export const IdempotencyHeader = z.object({
  // Header names are matched case-insensitively by the validator; this is the documented spelling.
  "Idempotency-Key": z.string().min(1).max(200).optional().openapi({
    description: "Makes the POST safe to retry: a repeat with the same key (per account; per " +
      "client IP on signup) replays the stored 2xx response verbatim with " +
      "`Idempotent-Replayed: true` instead of running again. Kept 24 h. The same key on another " +
      "endpoint answers 409 `idempotency_conflict`.",
    example: "6f1c1f2e-4b8a-4c1e-9d2a-5a7a0d7c2b11",
  }),
});

/** The request headers of an operation a live key may pay per job (machine payments). */
export const PayableHeaders = IdempotencyHeader.extend({
  "Payment-Authorization": z.string().optional().openapi({
    description: "Machine payments (where the operator enables them): the `Payment` credential " +
      "answering the `WWW-Authenticate: Payment` challenge of this operation's 402 (a start's " +
      "`insufficient_credits`, an upgrade's credit pack; Machine Payments Protocol, Stripe " +
      "method). Charged once; the answer carries `Payment-Receipt`.",
    example: "Payment eyJjaGFsbGVuZ2UiOnsi...",
  }),
});

const receiptHeader = {
  "Payment-Receipt": {
    schema: { type: "string" as const },
    description: "Present when a `Payment-Authorization` credential paid this start: the " +
      "payment's receipt (Machine Payments Protocol; its `reference` is the Stripe PaymentIntent)",
  },
};

const challengeHeader = {
  "WWW-Authenticate": {
    schema: { type: "string" as const },
    description: "With machine payments on, a live key's `insufficient_credits` carries a " +
      "`Payment` challenge for exactly this unit's price (USD, 1 credit = 1 USD); pay it and " +
      "repeat the request with the credential in `Payment-Authorization`",
  },
  "Cache-Control": {
    schema: { type: "string" as const },
    description: "`no-store` with a challenge",
  },
};

export const bearerSecurity = [{ bearerAuth: [] }];
