/**
 * Staging access: the credentials an audit may carry to crawl a site behind a login, as the
 * request headers they become, what of them may be shown (`maskSiteAuth`), and the rules that
 * bound them. Three kinds: HTTP Basic (`user`, `password`), a few named headers (a bearer token, a
 * preview-bypass header), or a `Cookie` string.
 *
 * The headers go only to the project's own origin (scheme, host and port of the start URL): the
 * fetcher adds them per request, after comparing the request's origin, so a redirect to another
 * host, another port or the http twin of an https site never receives them (fetcher.ts).
 *
 * @module
 */

export type SiteAuth =
  | { type: "basic"; user: string; password: string }
  | { type: "headers"; headers: Record<string, string> }
  | { type: "cookie"; cookie: string };

import type { MaskedSiteAuth } from "./types.ts";
export type { MaskedSiteAuth };

/** The mask shown in place of every secret value. */
export const MASK = "***";

/** Named headers at most. */
export const MAX_AUTH_HEADERS = 8;
/** Characters of a header name at most. */
export const MAX_HEADER_NAME = 64;
/** Characters of a header value, a cookie string, a user name or a password at most. */
export const MAX_SECRET_LENGTH = 4096;
export const MAX_USER_LENGTH = 256;

/** An HTTP field name: RFC 9110 token characters. */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A field value we send: visible ASCII, spaces and tabs; no CR, LF or NUL (no injection). */
export const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/**
 * Header names a caller may not set: hop-by-hop and framing fields, the ones the crawler owns
 * (its identity, what it accepts, the compression it decodes), and proxy credentials.
 */
export const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "proxy-authorization",
  "proxy-authenticate",
  "proxy-connection",
  "user-agent",
  "accept",
  "accept-encoding",
  "range",
  "if-modified-since",
  "if-none-match",
  "http2-settings",
]);

/** Why credentials are refused: the field (relative to the credentials object) and why. */
export interface SiteAuthProblem {
  path: string[];
  message: string;
}

/**
 * Why a set of credentials is refused, or null when it is acceptable. The zod schema checks the
 * shape first and reports this under its own path; this is the one place the rules are, for
 * every caller (API, schedules, the engine's tests).
 */
export function siteAuthProblem(auth: SiteAuth): SiteAuthProblem | null {
  const bad = (path: string[], message: string) => ({ path, message });
  // deno-lint-ignore no-control-regex
  const control = /[\x00-\x1f\x7f]/;
  if (auth.type === "basic") {
    if (auth.user.length === 0 || auth.user.length > MAX_USER_LENGTH) {
      return bad(["user"], `1 to ${MAX_USER_LENGTH} characters`);
    }
    // RFC 7617: the user-id cannot contain a colon; neither may carry control characters.
    if (auth.user.includes(":")) return bad(["user"], "must not contain ':'");
    if (control.test(auth.user)) return bad(["user"], "no control characters");
    if (auth.password.length > MAX_SECRET_LENGTH) {
      return bad(["password"], `at most ${MAX_SECRET_LENGTH} characters`);
    }
    if (control.test(auth.password)) return bad(["password"], "no control characters");
    return null;
  }
  if (auth.type === "cookie") {
    if (auth.cookie.length === 0 || auth.cookie.length > MAX_SECRET_LENGTH) {
      return bad(["cookie"], `1 to ${MAX_SECRET_LENGTH} characters`);
    }
    if (!HEADER_VALUE.test(auth.cookie)) {
      return bad(["cookie"], "visible ASCII only (no line breaks or control characters)");
    }
    return null;
  }
  const names = Object.keys(auth.headers);
  if (names.length === 0 || names.length > MAX_AUTH_HEADERS) {
    return bad(["headers"], `1 to ${MAX_AUTH_HEADERS} headers`);
  }
  const seen = new Set<string>();
  for (const name of names) {
    const where = ["headers", name.slice(0, MAX_HEADER_NAME)];
    if (name.length > MAX_HEADER_NAME || !HEADER_NAME.test(name)) {
      return bad(where, `a header name of 1 to ${MAX_HEADER_NAME} token characters`);
    }
    const lower = name.toLowerCase();
    if (FORBIDDEN_HEADERS.has(lower) || lower.startsWith("proxy-") || lower.startsWith("sec-")) {
      return bad(where, "this header cannot be set (hop-by-hop, framing, or the crawler's own)");
    }
    if (seen.has(lower)) return bad(where, "given twice (header names are case-insensitive)");
    seen.add(lower);
    const value = auth.headers[name];
    if (value.length > MAX_SECRET_LENGTH) {
      return bad(where, `at most ${MAX_SECRET_LENGTH} characters`);
    }
    if (!HEADER_VALUE.test(value)) {
      return bad(where, "visible ASCII only (no line breaks or control characters)");
    }
  }
  return null;
}

/** The request headers the credentials become (lower-case names). */
export function siteAuthHeaders(auth: SiteAuth): Record<string, string> {
  if (auth.type === "basic") {
    const bytes = new TextEncoder().encode(`${auth.user}:${auth.password}`);
    let bin = "";
    for (const b of bytes) bin += String.fromCharCode(b);
    return { authorization: `Basic ${btoa(bin)}` };
  }
  if (auth.type === "cookie") return { cookie: auth.cookie };
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(auth.headers)) out[k.toLowerCase()] = v;
  return out;
}

/** The credentials as they may be shown: never a password, cookie or header value. */
export function maskSiteAuth(auth: SiteAuth): MaskedSiteAuth {
  if (auth.type === "basic") return { type: "basic", user: auth.user, password: MASK };
  if (auth.type === "cookie") return { type: "cookie", cookie: MASK };
  const headers: Record<string, "***"> = {};
  for (const name of Object.keys(auth.headers)) headers[name] = MASK;
  return { type: "headers", headers };
}

/** Whether `url` is on `origin` (scheme, host and port), the only place credentials go. */
export function sameOrigin(url: string, origin: string): boolean {
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}
