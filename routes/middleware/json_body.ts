import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../domain/platform/mod.ts";
import type { AppEnv } from "../env.ts";
import { after } from "./coarse_timer.ts";

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
 * bounds slow request heads itself; see "Slow clients" in docs/contributors.md.)
 *
 * A body with a Content-Length (and no Transfer-Encoding) cannot be longer than declared, so it
 * is taken in one read, which Deno answers at once when the body came with the head (a small
 * JSON body always does); only a chunked body is read and counted chunk by chunk. The deadline
 * rides the shared coarse ticker (up to TICK_MS late) rather than a timer per request.
 */
export function readBodyCapped(
  req: Request,
  maxBytes: number,
  timeoutMs = DEFAULT_BODY_TIMEOUT_MS,
): Promise<Uint8Array> {
  return readCapped(
    req,
    maxBytes,
    timeoutMs,
    (r) => r.arrayBuffer().then((b) => new Uint8Array(b)),
    (bytes) => bytes,
  );
}

const UTF8 = new TextDecoder();

/**
 * `readBodyCapped` as text, invalid UTF-8 replaced as `Request.text()` does. A declared body is
 * taken with `text()` itself, which Deno serves from the request without a stream.
 */
export function readTextCapped(
  req: Request,
  maxBytes: number,
  timeoutMs = DEFAULT_BODY_TIMEOUT_MS,
): Promise<string> {
  return readCapped(req, maxBytes, timeoutMs, (r) => r.text(), (bytes) => UTF8.decode(bytes));
}

async function readCapped<T>(
  req: Request,
  maxBytes: number,
  timeoutMs: number,
  whole: (req: Request) => Promise<T>,
  fromBytes: (bytes: Uint8Array) => T,
): Promise<T> {
  const declared = req.headers.get("content-length");
  if (Number(declared ?? "0") > maxBytes) throw tooLarge(maxBytes);
  let expire: (err: ApiError) => void = () => {};
  const expired = new Promise<never>((_, reject) => expire = reject);
  const cancel = after(timeoutMs, () => expire(tooSlow(timeoutMs)));
  try {
    if (declared !== null && !req.headers.has("transfer-encoding")) {
      const read = whole(req);
      read.catch(() => {}); // after a 408 the connection closes under it
      return await Promise.race([read, expired]);
    }
    if (!req.body) return fromBytes(new Uint8Array(0));
    const reader = req.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      while (true) {
        const { done, value } = await Promise.race([reader.read(), expired]);
        if (done) break;
        size += value.byteLength;
        if (size > maxBytes) throw tooLarge(maxBytes);
        chunks.push(value);
      }
    } catch (err) {
      await reader.cancel().catch(() => {});
      throw err;
    }
    const all = new Uint8Array(size);
    let at = 0;
    for (const ch of chunks) {
      all.set(ch, at);
      at += ch.byteLength;
    }
    return fromBytes(all);
  } finally {
    cancel();
  }
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
