import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { ApiError } from "../../domain/platform/mod.ts";
import type { AppEnv } from "../env.ts";

/**
 * The codes that end a trial (only a sandbox key meets them: live keys neither expire nor get
 * `payment_required`): their answers say where the trial continues.
 */
const TRIAL_ENDINGS = new Set(["sandbox_limit_reached", "payment_required", "key_expired"]);

/**
 * The `/v1` error body. An error that ends a trial also carries `upgrade_url` (the human's
 * upgrade page) and `upgrade`, the call that starts one.
 */
export function errorBody(baseUrl: string, err: ApiError): Record<string, unknown> {
  return {
    error: {
      code: err.code,
      message: err.message,
      doc_url: `${baseUrl}/docs/errors#${err.code}`,
    },
    ...(TRIAL_ENDINGS.has(err.code)
      ? {
        upgrade_url: `${baseUrl}/upgrade`,
        upgrade: "POST /v1/upgrades: a human finishes it at the verification_uri_complete it " +
          "answers; then GET its poll path for the live key",
      }
      : {}),
    ...err.extra,
  };
}

/** Maps anything thrown to an ApiError; unknown failures become `internal_error`. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) {
      return new ApiError("payload_too_large", "Request body is too large");
    }
    if (err.status === 415) {
      return new ApiError("invalid_request", "Content-Type must be application/json");
    }
    if (err.status >= 400 && err.status < 500) {
      return new ApiError("invalid_request", err.message || "Malformed request");
    }
  }
  return new ApiError(
    "internal_error",
    "Internal server error; retry with the same Idempotency-Key",
  );
}

/**
 * Renders every failure in one place, as the `/v1` error shape. Unexpected exceptions are logged
 * with the request id and never leak a stack trace to the caller.
 */
export function errorHandler(baseUrl: string): ErrorHandler<AppEnv> {
  return function renderError(err: Error, c: Context<AppEnv>) {
    const apiError = toApiError(err);
    if (apiError.status >= 500) {
      console.error(
        JSON.stringify({
          level: "error",
          request_id: c.get("requestId"),
          method: c.req.method,
          path: c.req.path,
          error: err instanceof ApiError ? err.message : String(err?.stack ?? err),
        }),
      );
    }
    for (const [k, v] of Object.entries(apiError.headers ?? {})) c.header(k, v);
    return c.json(errorBody(baseUrl, apiError), apiError.status as 400);
  };
}

/**
 * Unknown paths answer 404 `not_found` in the error shape. The message never echoes the path:
 * it arrives percent-decoded, and reflecting it would put caller-chosen text in our answers.
 */
export function notFoundHandler(baseUrl: string): NotFoundHandler<AppEnv> {
  return function notFound(c: Context<AppEnv>) {
    return c.json(errorBody(baseUrl, noRoute()), 404);
  };
}

/** The one 404 of an unknown route (also `/admin/*` without an operator token). */
export function noRoute(): ApiError {
  return new ApiError(
    "not_found",
    "No route matches this method and path; see /v1/openapi.json",
  );
}
