/**
 * Small predicates several checks share (robots directives, URL helpers), kept pure and cheap.
 *
 * @module
 */
import type { PageContext, SiteOutcome } from "../types.ts";

/** Meta robots / googlebot or X-Robots-Tag say noindex (`none`, or a past `unavailable_after`). */
export function isNoindex(facts: { robotsMeta: string }, headers: Headers, now: number): boolean {
  const header = (headers.get("x-robots-tag") ?? "").toLowerCase();
  return directivesNoindex(facts.robotsMeta, now) || directivesNoindex(header, now);
}

function directivesNoindex(text: string, now: number): boolean {
  if (text === "") return false;
  for (const raw of text.split(",")) {
    // X-Robots-Tag may prefix a user agent: "googlebot: noindex".
    const part = raw.trim();
    const d = part.includes(":") && !part.startsWith("unavailable_after")
      ? part.slice(part.indexOf(":") + 1).trim()
      : part;
    if (d === "noindex" || d === "none") return true;
    if (d.startsWith("unavailable_after")) {
      const t = Date.parse(d.slice(d.indexOf(":") + 1).trim());
      if (Number.isFinite(t) && t < now) return true;
    }
  }
  return false;
}

export function isNofollowPage(robotsMeta: string, headers: Headers): boolean {
  const all = `${robotsMeta},${(headers.get("x-robots-tag") ?? "").toLowerCase()}`;
  return /(^|[,\s:])(nofollow|none)\b/.test(all);
}

export function isHttps(p: PageContext): boolean {
  return p.url.protocol === "https:";
}

/** Site-level yes/no outcome. */
export function flag(bad: boolean): SiteOutcome {
  return { eligible: 1, affected: bad ? 1 : 0 };
}

export function stripWww(host: string): string {
  return host.startsWith("www.") ? host.slice(4) : host;
}

/** Canonical values from `<head>` plus any `Link: <...>; rel="canonical"` header. */
export function canonicalValues(p: PageContext): string[] {
  const out = [...p.facts.canonicals];
  const link = p.headers.get("link");
  if (link) {
    for (const m of link.matchAll(/<([^>]*)>\s*;[^,]*rel="?canonical"?/gi)) out.push(m[1]);
  }
  return out;
}

/** Resolves canonical hrefs; null marks an invalid (empty, relative, unparseable) value. */
export function resolveCanonicals(p: PageContext): (URL | null)[] {
  return canonicalValues(p).map((v) => {
    const t = v.trim();
    if (!/^https?:\/\//i.test(t)) return null;
    try {
      return new URL(t);
    } catch {
      return null;
    }
  });
}
