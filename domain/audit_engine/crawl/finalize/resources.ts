/**
 * The resource pass (broken_resources): the checked resources read once, keeping the hashes of
 * those judged and the answer of each broken one; then every page's stored references
 * (`audit_embeds`), each matched against them: evidence page → resource → element and attribute
 * → status (or failure). A frame source is matched against the crawl's own record of it (the
 * broken targets of the records pass, redirects ending broken included), charged here so the
 * status checks do not count it again, and remembered as embedded (a page shown in a frame is
 * not an orphan).
 *
 * Memory: one number per judged resource (at most `CRAWL_MAX_RESOURCES`), one entry per broken
 * one, one number per frame target; never a page's references beyond the one being read. A
 * broken frame's URL is read from KV (url_names.ts) when its item is kept.
 *
 * @example
 * ```ts
 * import { urlHash } from "../store.ts";
 * import type { Facts } from "./facts.ts";
 * declare const kv: Deno.Kv, auditId: string, f: Facts, url: string;
 * declare const { broken, redirects, failing, names }: ResourceInputs;
 * const framed = await readResources(kv, auditId, f, { broken, redirects, failing, names });
 * framed.has(urlHash(url)); // some crawled page shows `url` in a frame
 * ```
 *
 * @module
 */
import { keys } from "../../../platform/mod.ts";
import { FRAME_KINDS, RESOURCE_ELEMENTS } from "../../resources.ts";
import { Pacer, yieldToLoop } from "../event_loop.ts";
import { listInPages, urlHash } from "../store.ts";
import type { Facts } from "./facts.ts";
import type { FailingUrls } from "./failing.ts";
import type { Redirects } from "./redirects.ts";
import type { BrokenTargets } from "./targets.ts";
import type { UrlNames } from "./url_names.ts";

/** What the resource pass reads from the passes before it. */
export interface ResourceInputs {
  broken: BrokenTargets;
  redirects: Redirects;
  failing: FailingUrls;
  names: UrlNames;
}

/**
 * Fills `f.resourcePages` and `f.brokenResources`; returns the hashes of the URLs crawled pages
 * show in frames.
 */
export async function readResources(
  kv: Deno.Kv,
  auditId: string,
  f: Facts,
  { broken, redirects, failing, names }: ResourceInputs,
): Promise<Set<number>> {
  const judged = new Set<number>();
  const bad = new Map<number, { url: string; status: number; failure: string | null }>();
  const pace = new Pacer();
  for await (const page of listInPages(kv, keys.auditResources(auditId))) {
    for (const e of page) {
      if (pace.due()) await yieldToLoop();
      const r = e.value;
      if (r.r !== "ok" && r.r !== "broken") continue; // not checked, or not judged
      const url = e.key[2] as string;
      const h = urlHash(url);
      judged.add(h);
      if (r.r === "broken") bad.set(h, { url, status: r.s ?? 0, failure: r.f ?? null });
    }
  }
  const framed = new Set<number>();
  for await (const page of listInPages(kv, keys.auditEmbedsAll(auditId), 200)) {
    for (const e of page) {
      if (pace.due(e.value.t.length)) await yieldToLoop();
      const url = e.key[2] as string;
      const { t, e: kinds } = e.value;
      let applies = false;
      let counted = false;
      for (let i = 0; i < t.length; i++) {
        const h = t[i];
        const kind = RESOURCE_ELEMENTS[kinds[i]];
        if (kind === undefined) continue;
        // `url` null: a frame's, read from KV if its item is kept.
        let hit: { url: string | null; status: number; failure: string | null } | undefined;
        if (FRAME_KINDS.has(kinds[i])) {
          framed.add(h);
          // The frame's own record answers for it; its failure is charged here, once.
          failing.chargeFrom(h, redirects);
          applies = true;
          const b = broken.get(h);
          hit = b && { url: null, ...b };
        } else {
          if (!judged.has(h)) continue;
          applies = true;
          hit = bad.get(h);
        }
        if (hit === undefined) continue;
        const item = {
          url,
          resource: hit.url ?? "",
          element: kind.element,
          attribute: kind.attribute,
          status: hit.status || null,
          failure: hit.failure,
        };
        if (f.brokenResources.add(item, !counted) && hit.url === null) {
          names.later(item, "resource", h);
        }
        counted = true;
      }
      if (applies) f.resourcePages++;
    }
  }
  return framed;
}
