/**
 * How `/v1` sends an operation's `BodyResult` (app/operation.ts): a text as is, and an export as a
 * byte stream pulled chunk by chunk, so the store is read only as fast as the client takes the
 * bytes and memory stays flat whatever the list's size. Also the `Accept` negotiation of an
 * operation's other formats.
 *
 * @module
 */
import type { Context } from "hono";
import type { BodyResult } from "../app/operation.ts";

/**
 * The format an `Accept` header asks for among `formats`, or undefined for JSON: the media range
 * with the highest `q` wins (the earlier one on a tie); JSON and wildcards mean the default.
 */
export function negotiateFormat(
  accept: string | undefined,
  formats: Record<string, { contentType: string }>,
): string | undefined {
  if (!accept) return undefined;
  const ranges = accept.split(",").map((part, i) => {
    const [type, ...params] = part.trim().toLowerCase().split(";").map((s) => s.trim());
    const q = params.find((p) => p.startsWith("q="));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    return { type, q: Number.isFinite(weight) ? weight : 0, i };
  }).filter((r) => r.q > 0).sort((a, b) => b.q - a.q || a.i - b.i);
  for (const { type } of ranges) {
    if (type === "application/json" || type.endsWith("/*")) return undefined;
    const hit = Object.entries(formats).find(([, f]) => f.contentType.split(";")[0] === type);
    if (hit) return hit[0];
  }
  return undefined;
}

/** The response of a body result, with the headers the route's context already holds. */
export async function bodyResponse(
  c: Context,
  result: BodyResult,
  status: number,
): Promise<Response> {
  // Bytes made on demand are made first: a failure throws here, before any header is sent.
  const bytes = typeof result.body === "function" ? await result.body() : null;
  c.header("Content-Type", result.contentType);
  if (result.filename) {
    c.header("Content-Disposition", `attachment; filename="${result.filename}"`);
  }
  const body = bytes ??
    (typeof result.body === "string"
      ? result.body
      : byteStream(result.body as AsyncIterable<string>));
  // deno-lint-ignore no-explicit-any
  return c.body(body as any, status as 200);
}

/**
 * Chunks as bytes, produced on demand: `pull` runs when the connection has room for more, so the
 * producer (a KV listing) never runs ahead of the client by more than a chunk. A failure midway
 * ends the stream in error (the client sees a cut download, never a partial file passed as
 * whole); a client that goes away stops the producer.
 */
function byteStream(chunks: AsyncIterable<string>): ReadableStream<Uint8Array> {
  const it = chunks[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  // A chunk in flight when the client left has nowhere to go: it is dropped, not an error.
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await it.next();
        if (cancelled) return;
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      } catch (err) {
        console.error(JSON.stringify({
          level: "error",
          msg: "streamed body failed",
          error: String((err as Error)?.message ?? err),
        }));
        controller.error(err);
      }
    },
    async cancel() {
      cancelled = true;
      await it.return?.();
    },
  });
}
