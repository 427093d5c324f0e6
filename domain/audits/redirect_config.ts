/**
 * A redirect map as the files web servers read: an nginx `map` block and Apache `RedirectMatch`
 * lines. Every URL in them came from a crawled site, which may be hostile, and an operator pastes
 * the file into their server's configuration, so nothing is trusted: each source and destination
 * is checked against what the format can hold literally, written in a form with no syntax left
 * in it (quoted, regex-escaped byte by byte), and a URL that cannot be written that way is left
 * out with the reason, never written approximately.
 *
 * - nginx: `map $request_uri $serpwright_redirect { "<raw path and query>" "<destination>"; }`.
 *   `$request_uri` is the request target as sent (percent-encoded), so the source is written as
 *   the crawl saw it, never decoded. Inside double quotes nginx has escapes for neither `$`
 *   (a variable) nor a raw control character, so those are refused; `"` and `\` would end or
 *   escape the string, and braces, whitespace and non-ASCII are refused too (a URL the WHATWG
 *   parser wrote has them percent-encoded, so their presence means something odd); `;` and `'`
 *   are plain characters inside the quotes.
 * - Apache: `RedirectMatch 301 "^<path>$" "<destination>"`. The pattern is matched against the
 *   decoded path, so the source path is decoded (UTF-8) and every byte other than
 *   `[A-Za-z0-9/_-]` is written as `\xHH`: the pattern holds no metacharacter, quote or space
 *   of its own. A decoded control character (an encoded newline, say) is refused, and so is a
 *   source with a query string (RedirectMatch never sees the query).
 * - Destinations (both): absolute http(s) URLs or paths made only of unreserved and a few
 *   sub-delimiter characters (`A-Z a-z 0-9 - . _ ~ / % : ? = & + , @`); anything else, `$`
 *   (a back-reference to Apache, a variable to nginx) above all, is refused.
 *
 * @module
 */

/** Why a URL was left out of a server file; null when it is written. */
export type LeftOutReason = string | null;

/** Characters a destination may hold as they are. */
const SAFE_DESTINATION = /^[A-Za-z0-9\-._~/%:?=&+,@]+$/;
/** Characters an nginx source may hold inside double quotes (printable ASCII, minus syntax). */
const SAFE_NGINX_SOURCE = /^\/[\x21-\x7e]*$/;
const NGINX_REFUSED = /["\\$`{}]/;
/** Bytes an Apache pattern writes as they are. */
const PLAIN_BYTE = /^[A-Za-z0-9/_-]$/;
const MAX_LENGTH = 2_000;

/** Why `to` cannot be a destination in a server file, or null. */
export function destinationProblem(to: string): LeftOutReason {
  if (to.length > MAX_LENGTH) return "destination longer than 2,000 characters";
  if (!SAFE_DESTINATION.test(to)) {
    return "destination holds characters a server file cannot hold literally " +
      "(quotes, $, ;, braces, whitespace or control characters)";
  }
  if (!to.startsWith("/") && !/^https?:\/\//.test(to)) return "destination is not http(s)";
  return null;
}

/** The raw request target (path and query, as sent) of an absolute URL, or null. */
function requestTarget(url: string): string | null {
  try {
    const u = new URL(url);
    return u.pathname + u.search;
  } catch {
    return null;
  }
}

/** The nginx map line of one redirect, or why it is left out. */
export function nginxLine(from: string, to: string): { line: string } | { reason: string } {
  const source = requestTarget(from);
  if (source === null) return { reason: "source is not a URL" };
  if (source.length > MAX_LENGTH) return { reason: "source longer than 2,000 characters" };
  if (!SAFE_NGINX_SOURCE.test(source) || NGINX_REFUSED.test(source)) {
    return {
      reason: "source holds characters nginx cannot match literally inside quotes " +
        "(double quotes, backslash, $, braces, whitespace, control or non-ASCII characters)",
    };
  }
  const bad = destinationProblem(to);
  if (bad) return { reason: bad };
  return { line: `    "${source}" "${to}";` };
}

/** The Apache RedirectMatch line of one redirect, or why it is left out. */
export function apacheLine(from: string, to: string): { line: string } | { reason: string } {
  let u: URL;
  try {
    u = new URL(from);
  } catch {
    return { reason: "source is not a URL" };
  }
  if (u.search !== "") {
    return { reason: "source has a query string, which RedirectMatch does not match" };
  }
  let path: string;
  try {
    path = decodeURIComponent(u.pathname);
  } catch {
    return { reason: "source path is not valid percent-encoded UTF-8" };
  }
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1f\x7f]/.test(path)) {
    return { reason: "source decodes to a control character (an encoded newline or tab)" };
  }
  if (path.length > MAX_LENGTH) return { reason: "source longer than 2,000 characters" };
  const bad = destinationProblem(to);
  if (bad) return { reason: bad };
  let pattern = "";
  for (const byte of new TextEncoder().encode(path)) {
    const ch = String.fromCharCode(byte);
    pattern += byte < 0x80 && PLAIN_BYTE.test(ch) ? ch : `\\x${byte.toString(16).padStart(2, "0")}`;
  }
  return { line: `RedirectMatch 301 "^${pattern}$" "${to}"` };
}

/** The destination as written: a path when it is on the source's origin, else the whole URL. */
export function destinationOf(from: string, to: string): string {
  try {
    const a = new URL(from);
    const b = new URL(to);
    return a.origin === b.origin ? b.pathname + b.search : b.href;
  } catch {
    return to;
  }
}

/** The first lines of a server file: what it is and how to use it (no crawled text in them). */
export function header(kind: "nginx" | "apache", auditId: string): string[] {
  const id = /^[A-Za-z0-9_-]{1,100}$/.test(auditId) ? auditId : "audit";
  const out = [
    `# Serpwright redirect map of audit ${id}: broken internal URLs to the live URL they most`,
    "# likely meant. Review before use.",
  ];
  if (kind === "nginx") {
    out.push(
      "# In the http block; then in the server block:",
      "#   if ($serpwright_redirect) { return 301 $serpwright_redirect; }",
    );
  } else {
    out.push("# In the server or virtual host configuration (mod_alias).");
  }
  return out;
}
