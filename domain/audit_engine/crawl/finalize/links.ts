/**
 * Pass 2, the link graph: every stored link chunk read in pages, counting each URL's followable
 * inlinks, reporting links to broken and redirecting URLs with their anchor texts, charging the
 * failing URLs links point at, and feeding the link score, computed at the end (link_score.ts).
 *
 * Memory: the counts go into the records pass's URL table (url_table.ts, 10 bytes per URL); the
 * link score keeps its own compact graph (link_score.ts); broken and redirecting targets are
 * looked up by hash (targets.ts, redirects.ts), and the URLs of the items kept are read from KV
 * at the end (url_names.ts).
 *
 * @example
 * ```ts
 * import { urlHash } from "../store.ts";
 * import type { Facts } from "./facts.ts";
 * declare const kv: Deno.Kv, auditId: string, f: Facts, url: string;
 * declare const read: Omit<LinkInputs, "failing" | "linkScores">;
 * declare const { failing, linkScores }: LinkInputs;
 * const graph = await readLinks(kv, auditId, f, { ...read, failing, linkScores });
 * graph.urls.inlinksOf(urlHash(url)); // followable internal links to `url`
 * ```
 *
 * @module
 */
import { keys } from "../../../platform/mod.ts";
import { Pacer, yieldToLoop } from "../event_loop.ts";
import type { LinkScores } from "../link_score.ts";
import { listInPages, urlHash } from "../store.ts";
import type { Facts } from "./facts.ts";
import type { FailingUrls } from "./failing.ts";
import type { Redirects } from "./redirects.ts";
import type { BrokenTargets } from "./targets.ts";
import type { UrlNames } from "./url_names.ts";
import type { UrlTable } from "./url_table.ts";

/**
 * Links handled between two yields. A page of the link index holds up to 500 chunks of up to 500
 * links each, too many to handle between two KV reads without a pause.
 */
const LINKS_PER_YIELD = 16_384;

/** What the link pass reads from the passes before it. */
export interface LinkInputs {
  redirects: Redirects;
  broken: BrokenTargets;
  failing: FailingUrls;
  names: UrlNames;
  linkScores: LinkScores;
  /** The records pass's URLs, whose inlinks this pass counts. */
  urls: UrlTable;
  /** Where the links' keys (by page URL) are cut into ranges read side by side. */
  splits?: readonly string[];
}

/** What the records pass after it needs: inlinks by URL hash. */
export interface LinkGraph {
  urls: UrlTable;
}

/** Reads every link once; fills `f.brokenLinks`, `f.redirectLinks` and the link score. */
export async function readLinks(
  kv: Deno.Kv,
  auditId: string,
  f: Facts,
  { redirects, broken, failing, linkScores, urls, names, splits }: LinkInputs,
): Promise<LinkGraph> {
  const pace = new Pacer(LINKS_PER_YIELD);
  // One binary search a link serves both tables: the link score is built over the URL table's keys.
  if (!linkScores.sharesKeys(urls.keys)) throw new Error("the link score must share the URL keys");
  let src = "";
  let srcBroken = false;
  let srcRedirect = false;
  for await (const page of listInPages(kv, keys.auditLinksAll(auditId), 500, splits)) {
    for (const e of page) {
      if (pace.due(e.value.t.length)) await yieldToLoop();
      const url = e.key[2];
      const self = urlHash(url);
      if (url !== src) {
        src = url;
        srcBroken = srcRedirect = false;
        linkScores.beginPage(self);
      }
      const { t, a, f: followable } = e.value;
      for (let i = 0; i < t.length; i++) {
        const h = t[i];
        const end = failing.chargeFrom(h, redirects);
        const via = end === h ? -1 : redirects.targetOf(h);
        if (h === self) continue;
        if (i < followable) {
          const slot = urls.slotOf(h);
          const page = linkScores.addLinkAt(slot);
          if (!page && via >= 0 && end >= 0) linkScores.addLink(end);
          urls.linkAt(slot);
        }
        const b = broken.get(h);
        if (b) {
          const item = {
            url,
            target: "",
            anchor: a[i] ?? "",
            status: b.status || null,
            failure: b.failure,
          };
          if (f.brokenLinks.add(item, !srcBroken)) names.later(item, "target", h);
          srcBroken = true;
        }
        if (via >= 0) {
          const item = { url, target: "", anchor: a[i] ?? "", redirects_to: "" };
          if (f.redirectLinks.add(item, !srcRedirect)) {
            names.later(item, "target", h);
            names.later(item, "redirects_to", via);
          }
          srcRedirect = true;
        }
      }
    }
  }
  await linkScores.compute();
  return { urls };
}
