/**
 * The lab metrics of a rendered audit's lab pages (throttled like Lighthouse's mobile run), kept
 * per page with the findings so the HTML report can show every sampled page's figures, not only
 * the pages a lab check fired on. Written by the render steps (crawl/post_steps.ts); at most
 * `RENDER_LAB_PAGES` entries per audit, read in one short list.
 *
 * @module
 */
import type { LabRecord } from "./types.ts";
import type { LabMetrics } from "../render/mod.ts";
import { keys, list } from "../platform/mod.ts";

export type { LabRecord };

/** The stored form of a render's lab metrics. */
export function labRecord(url: string, lab: LabMetrics): LabRecord {
  return {
    url,
    fcp_ms: lab.fcpMs,
    lcp_ms: lab.lcpMs,
    cls: lab.cls,
    tbt_ms: lab.tbtMs,
    transfer_bytes: lab.transferBytes,
    requests: lab.requests,
  };
}

/** Lab pages of an audit listed at most (the render caps keep it far below). */
const MAX_LAB_PAGES = 100;

/** The lab pages of an audit, by URL. */
export async function labPagesOf(kv: Deno.Kv, auditId: string): Promise<LabRecord[]> {
  const out: LabRecord[] = [];
  for await (const e of list(kv, { prefix: keys.auditLabs(auditId) }, { limit: MAX_LAB_PAGES })) {
    out.push(e.value);
  }
  return out;
}
