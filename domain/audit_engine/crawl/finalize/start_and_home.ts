/**
 * The start URL's record, the home page at the end of its redirects (null on a loop), and the
 * bounded records sample the checks that read single URLs get (`SiteFacts.records`).
 *
 * @example
 * ```ts
 * import type { Facts } from "./facts.ts";
 * import type { RecordsRead } from "./records.ts";
 * import type { CrawlState } from "../state.ts";
 * declare const kv: Deno.Kv, auditId: string, state: CrawlState, f: Facts, read: RecordsRead;
 * await startAndHome(kv, auditId, state.startUrl, read, f);
 * f.home?.status; // the status of the page the start URL ends on
 * ```
 *
 * @module
 */
import { getPages, urlHash } from "../store.ts";
import type { Facts } from "./facts.ts";
import { summary } from "./record.ts";
import type { RecordsRead } from "./records.ts";

/** Sets `f.start`, `f.home` and `f.records`. */
export async function startAndHome(
  kv: Deno.Kv,
  auditId: string,
  startUrl: string,
  read: Pick<RecordsRead, "redirects" | "names" | "firstHttps" | "failedSample">,
  f: Facts,
): Promise<void> {
  const [startRec] = await getPages(kv, auditId, [startUrl]);
  if (startRec) f.start = summary(startRec);
  const start = urlHash(startUrl);
  const end = read.redirects.follow(start);
  const homeUrl = end < 0 ? null : end === start ? startUrl : (await read.names.get([end]))[0];
  if (homeUrl === null) f.home = null;
  else if (homeUrl === startUrl) f.home = f.start;
  else {
    const [h] = await getPages(kv, auditId, [homeUrl]);
    f.home = h ? summary(h) : null;
  }
  const sample = [f.start, ...(f.home && f.home !== f.start ? [f.home] : [])];
  if (read.firstHttps) sample.push(read.firstHttps);
  f.records = [...sample, ...read.failedSample];
}
