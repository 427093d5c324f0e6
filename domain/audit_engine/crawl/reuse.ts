/**
 * Incremental crawls: a project's audit reuses the parsed facts of the pages its previous audit
 * fetched, when the site says they did not change. Every HTML 2xx page of an audit that takes part
 * keeps a `page_reuse` entry (its ETag and Last-Modified, a digest of its body, the status,
 * headers and size it was judged with, and its `PageFacts`); the project's next compatible audit
 * asks for those URLs with `If-None-Match` / `If-Modified-Since`, and on a 304, or on a 200 whose
 * body has the same digest, skips the parse and runs the page checks on the stored facts. The
 * checks, the records and every site-wide pass then see the page exactly as a fresh parse would
 * have shown it: only the bytes fetched and the parse are saved.
 *
 * Compatible means the same fingerprint (`reuseFingerprint`): the same start origin, the same
 * User-Agent preset (a site may serve each bot its own page), the same per-page caps on links and
 * resources (they shape the facts), and the same version of the facts (`factsVersion`). Rendered
 * audits and audits with staging credentials take no part: they store nothing and reuse nothing.
 * docs/audit.md ("Incremental crawls") says this to users.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { keys } from "../../platform/mod.ts";
import { KV_LIMITS, valueBytes } from "../../../kv/limits_guard.ts";
import { FACT_COLLECTORS, type PageFacts } from "../page_facts.ts";
import type { FactCollector } from "../facts/collector.ts";
import type { ReuseBase, ReuseEntry } from "../types.ts";
import type { CrawlCaps } from "./caps.ts";
import type { CrawlInput, CrawlState } from "./state.ts";
import { getMany } from "./store.ts";

export type { ReuseBase, ReuseEntry };

/**
 * The version of what the dispatcher of `extractPageFacts` produces. Bump it with any change to
 * how a page is parsed or to the document's own facts (facts/document.ts); a family's change
 * raises that family's `version` instead (facts/collector.ts). Stored facts of another version are
 * never reused (a re-audit then fetches and parses every page once, and stores facts of the new
 * version).
 */
export const REUSE_VERSION = 1;

/**
 * The version of the facts: REUSE_VERSION, then each family that has a version of its own
 * (`id@version`, in list order). While no family has one it is REUSE_VERSION alone, as before
 * families had versions, so the fingerprints of stored audits stay valid.
 */
export function factsVersion(
  families: readonly Pick<FactCollector, "id" | "version">[] = FACT_COLLECTORS,
): number | string {
  const own = families.filter((c) => (c.version ?? 0) > 0).map((c) => `${c.id}@${c.version}`);
  return own.length === 0 ? REUSE_VERSION : [REUSE_VERSION, ...own].join(" ");
}
const FACTS_VERSION = factsVersion();

/** Response headers kept per page, at most (characters of names and values). */
const HEADER_CHARS = 8_000;
/** Headers not kept: they say nothing about the page a check reads, or change on every answer. */
const SKIPPED_HEADERS = new Set(["set-cookie", "date", "age", "expires", "content-length"]);
/** Room left under KV's value limit for the key's bookkeeping. */
const VALUE_SLACK = 1_024;

/**
 * The options fingerprint an audit's stored facts are valid for; null when the audit takes no
 * part (rendered, or with staging credentials: their pages are another site's view).
 */
export function reuseFingerprint(
  input: Pick<CrawlInput, "render" | "auth" | "userAgent" | "startUrl">,
  caps: Pick<CrawlCaps, "linksPerPage" | "resources">,
): string | null {
  if (input.render || input.auth) return null;
  return JSON.stringify([
    FACTS_VERSION,
    new URL(input.startUrl).origin,
    input.userAgent ?? "serpwright",
    caps.linksPerPage,
    (caps.resources ?? 0) > 0,
  ]);
}

/** What the fetch pool is given for one step's entries: what the previous audit stored. */
export interface StepReuse {
  /** `prior[i]`: the previous audit's entry for the step's i-th URL, or null. */
  prior: (ReuseEntry | null)[];
}

/**
 * The step's reuse: null when the audit takes no part; else (the state marked as storing facts)
 * the previous audit's entries for `urls`, read with getMany, or none when that audit's
 * fingerprint differs (an incompatible audit's facts are never reused).
 */
export async function stepReuse(
  kv: Deno.Kv,
  input: CrawlInput,
  caps: CrawlCaps,
  state: CrawlState,
  urls: readonly string[],
): Promise<StepReuse | null> {
  if (!input.incremental) return null;
  const fp = reuseFingerprint(input, caps);
  if (fp === null) return null;
  state.reuse ??= { fp, reused: 0 };
  const prev = input.incremental.previous;
  if (!prev || prev.fp !== fp) return { prior: urls.map(() => null) };
  return { prior: await getMany(kv, urls.map((u) => keys.pageReuse(prev.auditId, u))) };
}

/** The conditional request headers of a stored page (none without validators). */
export function conditionalHeaders(prior: ReuseEntry): Record<string, string> {
  const out: Record<string, string> = {};
  if (prior.e) out["if-none-match"] = prior.e;
  if (prior.m) out["if-modified-since"] = prior.m;
  return out;
}

/** A body's digest: 128 bits of SHA-256, base64. */
export function bodyDigest(body: Uint8Array): string {
  return createHash("sha256").update(body).digest("base64").slice(0, 22);
}

/** The headers a page's checks may read, bounded (HEADER_CHARS). */
export function keptHeaders(headers: Headers): [string, string][] {
  const out: [string, string][] = [];
  let chars = 0;
  for (const [name, value] of headers) {
    if (SKIPPED_HEADERS.has(name)) continue;
    chars += name.length + value.length;
    if (chars > HEADER_CHARS) break;
    out.push([name, value]);
  }
  return out;
}

/**
 * The entry a page keeps for the next audit with its size (`valueBytes`), or null when it would
 * not fit in one KV value (a page with thousands of long links): such a page is simply fetched
 * and parsed again next time.
 */
export function reuseEntry(
  validators: { etag: string | null; lastModified: string | null },
  digest: string,
  status: number,
  headers: [string, string][],
  bytes: number,
  facts: PageFacts,
): { entry: ReuseEntry; bytes: number } | null {
  const entry: ReuseEntry = { h: digest, s: status, hd: headers, b: bytes, f: facts };
  if (validators.etag) entry.e = validators.etag.slice(0, 500);
  if (validators.lastModified) entry.m = validators.lastModified.slice(0, 100);
  const size = valueBytes(entry);
  return size <= KV_LIMITS.valueBytes - VALUE_SLACK ? { entry, bytes: size } : null;
}
