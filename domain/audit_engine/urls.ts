/**
 * URL canonicalisation for the crawler: one spelling per resource so the visited set and the
 * link graph do not double count. Trailing slashes and query strings stay significant (they are
 * distinct URLs to Google); tracking parameters do not.
 *
 * @module
 */

const TRACKING = /^(utm_[a-z]+|gclid|fbclid|msclkid|mc_eid)$/i;

/**
 * Lower-case scheme and host, no default port (WHATWG URL does both), no fragment, duplicate
 * slashes in the path collapsed, tracking parameters removed.
 */
export function canonicalUrl(input: URL): string {
  // Fast path: most links need no rewriting, and copying a URL is the expensive part.
  if (input.hash === "" && input.search === "" && !input.pathname.includes("//")) {
    return input.href;
  }
  const u = new URL(input.href);
  u.hash = "";
  if (u.pathname.includes("//")) u.pathname = u.pathname.replace(/\/{2,}/g, "/");
  if (u.search !== "") {
    let drop = false;
    for (const k of u.searchParams.keys()) if (TRACKING.test(k)) drop = true;
    if (drop) {
      for (const k of [...u.searchParams.keys()]) if (TRACKING.test(k)) u.searchParams.delete(k);
    }
  }
  return u.href;
}

/** Parses and canonicalises, or returns null for unparseable / non-http(s) input. */
export function canonicalize(href: string, base?: string | URL): string | null {
  try {
    const u = new URL(href, base);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    return canonicalUrl(u);
  } catch {
    return null;
  }
}

/** The host of `u` without a leading `www.`: the key that decides what is internal. */
export function siteKeyOf(u: URL): string {
  const host = u.host;
  return host.startsWith("www.") ? host.slice(4) : host;
}
