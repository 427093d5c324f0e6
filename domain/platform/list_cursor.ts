/**
 * The API's list cursors: KV's own cursor as URL-safe text a client puts in a query unescaped,
 * and back (KV's cursor is URL-safe base64 already; only its `=` padding is left out). A cursor that is not one of ours is a 400 naming the
 * field, never a KV error.
 *
 * @example
 * ```ts
 * declare const iterator: Deno.KvListIterator<unknown>;
 * const next = encodeCursor(iterator.cursor);
 * const resume = decodeCursor(next); // what kv.list({ prefix }, { cursor }) takes
 * ```
 *
 * @module
 */
import { ApiError } from "./errors.ts";

/** The 400 of a cursor this list did not make. */
export function badCursor(): ApiError {
  return new ApiError("invalid_request", "cursor: not a cursor of this list");
}

/** KV's cursor as URL-safe text. */
export function encodeCursor(kvCursor: string): string {
  return kvCursor.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** A client's cursor as KV's; 400 `invalid_request` when it cannot be one. */
export function decodeCursor(cursor: string): string {
  if (!/^[A-Za-z0-9_-]{1,3000}$/.test(cursor)) throw badCursor();
  const b64 = cursor.replaceAll("-", "+").replaceAll("_", "/");
  const padded = b64 + "=".repeat((4 - (b64.length % 4)) % 4);
  // KV's cursor is the rest of a key after the listed prefix, so it starts with a key part's type
  // tag. KV itself takes any bytes (a listing simply resumes elsewhere inside its own prefix), so
  // this is what tells a client its cursor is not one of ours.
  let first: number;
  try {
    first = atob(padded).charCodeAt(0);
  } catch {
    throw badCursor();
  }
  if (!KEY_PART_TAGS.has(first)) throw badCursor();
  // Deno KV (2.x) makes and reads URL-safe base64 with its padding: a cursor turned into `+`
  // and `/` is refused as "invalid cursor" whenever it holds `-` or `_`.
  return cursor + "=".repeat((4 - (cursor.length % 4)) % 4);
}

/** The first byte of an encoded KV key part: bytes, string, integer (bigint), number, boolean. */
const KEY_PART_TAGS = new Set([
  0x01,
  0x02,
  ...Array.from({ length: 0x1d - 0x0b + 1 }, (_, i) => 0x0b + i),
  0x21,
  0x26,
  0x27,
]);
