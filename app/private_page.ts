/**
 * The security headers of a page shown to a person outside the API (a shared report or preview,
 * the upgrade pages, the email confirmation): one inline stylesheet allowed by its hash, no
 * script, no frame, never indexed, never a referrer (tokens ride in these URLs), never sniffed or
 * kept by a shared cache. One definition, so the pages cannot drift apart on a rule.
 *
 * @example
 * ```ts
 * import { privatePageHeaders } from "./private_page.ts";
 * const headers = privatePageHeaders("body{margin:0}", { formAction: "'self'" });
 * console.log(headers["Content-Security-Policy"]);
 * ```
 *
 * @module
 */
import { createHash } from "node:crypto";

/** `'sha256-…'` of a stylesheet, the form a policy's `style-src` names it in. */
export function styleHash(style: string): string {
  return `'sha256-${createHash("sha256").update(style).digest("base64")}'`;
}

/**
 * The headers for pages styled by `style`: forms may post to this server (`'self'`) or nowhere
 * (`'none'`); `cache` is the page's `Cache-Control` (`private, no-store` unless said).
 */
export function privatePageHeaders(
  style: string,
  options: { formAction: "'self'" | "'none'"; cache?: string },
): Readonly<Record<string, string>> {
  const csp = [
    "default-src 'none'",
    `style-src ${styleHash(style)}`,
    "img-src data:",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    `form-action ${options.formAction}`,
  ].join("; ");
  return {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": csp,
    "X-Robots-Tag": "noindex, nofollow",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": options.cache ?? "private, no-store",
  };
}
