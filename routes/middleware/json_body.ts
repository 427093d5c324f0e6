import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../domain/errors.ts";
import type { AppEnv } from "../env.ts";

/** No endpoint needs more; larger bodies are refused before they are read in full. */
export const MAX_BODY_BYTES = 64 * 1024;
const MAX_DEPTH = 20;

/**
 * Reads and parses a JSON body once, with a size cap counted on the bytes actually received
 * (Content-Length is not trusted), so the zod validators downstream see a parsed object. An empty
 * body counts as `{}` (several endpoints take an optional body); anything else must be JSON.
 */
export function jsonBody(timeoutMs = DEFAULT_BODY_TIMEOUT_MS): MiddlewareHandler<AppEnv> {
  return async function jsonBodyMiddleware(c, next) {
    const method = c.req.method;
    if (method !== "POST" && method !== "PUT" && method !== "PATCH") return await next();
    const text = await readText(c.req.raw, timeoutMs);
    let value: unknown = {};
    if (text.trim() !== "") {
      const type = c.req.header("content-type") ?? "";
      if (!/^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type)) {
        throw new ApiError("invalid_request", "Content-Type must be application/json");
      }
      try {
        value = JSON.parse(text);
      } catch {
        throw new ApiError("invalid_request", "Malformed JSON in request body");
      }
      if (depth(value) > MAX_DEPTH) {
        throw new ApiError("invalid_request", `JSON nested deeper than ${MAX_DEPTH} levels`);
      }
    }
    // Hono's validators read `c.req.json()`, which answers from this cache; an empty body must
    // also read as empty bytes, or the media-type gate would see the cached `{}` as a body.
    c.req.bodyCache.json = Promise.resolve(value);
    if (text.trim() === "") {
      c.req.bodyCache.arrayBuffer = Promise.resolve(new ArrayBuffer(0)) as never;
    }
    await next();
  };
}

function tooLarge(maxBytes = MAX_BODY_BYTES): ApiError {
  return new ApiError("payload_too_large", `Request body exceeds ${maxBytes} bytes`);
}

/** How long a whole request body may take to arrive (`REQUEST_BODY_TIMEOUT_MS`). */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

function tooSlow(timeoutMs: number): ApiError {
  return new ApiError(
    "request_timeout",
    `The request body did not arrive within ${timeoutMs} ms`,
    undefined,
    { Connection: "close" },
  );
}

/**
 * Reads a request body, refusing with 413 `payload_too_large` as soon as more than `maxBytes`
 * arrive (a declared Content-Length over the cap is refused before reading; chunked bodies are
 * counted as they come), and with 408 `request_timeout` when the whole body has not arrived within
 * `timeoutMs`, so a client trickling a body cannot hold a connection and a handler open. (Deno
 * bounds slow request heads itself; see the README's "Slow clients".)
 */
export async function readBodyCapped(
  req: Request,
  maxBytes: number,
  timeoutMs = DEFAULT_BODY_TIMEOUT_MS,
): Promise<Uint8Array> {
  if (Number(req.headers.get("content-length") ?? "0") > maxBytes) throw tooLarge(maxBytes);
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    while (true) {
      const next = await Promise.race([reader.read(), expired]);
      if (next === "timeout") {
        await reader.cancel().catch(() => {});
        throw tooSlow(timeoutMs);
      }
      const { done, value } = next;
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge(maxBytes);
      }
      chunks.push(value);
    }
  } finally {
    clearTimeout(timer);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const ch of chunks) {
    all.set(ch, at);
    at += ch.byteLength;
  }
  return all;
}

async function readText(req: Request, timeoutMs: number): Promise<string> {
  const bytes = await readBodyCapped(req, MAX_BODY_BYTES, timeoutMs);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError("invalid_request", "Request body is not valid UTF-8");
  }
}

function depth(v: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[v, 1]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (x === null || typeof x !== "object") continue;
    if (d > max) max = d;
    if (d > MAX_DEPTH) return d;
    for (const child of Object.values(x)) stack.push([child, d + 1]);
  }
  return max;
}
