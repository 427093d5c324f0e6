/**
 * Runs the site-wide passes (finalize.ts) over a crawl already in a KV file and prints one JSON
 * line: the kernel's high-water mark of this process's RSS (VmHWM), the RSS before the passes,
 * the largest V8 heap and external memory (ArrayBuffers) seen, the seconds taken, the tallies,
 * the first stored item of the link findings and the stored records of the probed pages. Started with a low `--max-old-space-size` by the memory test, so a pass that outgrows
 * its budget crashes the child instead of passing.
 *
 * Usage: deno run -A tests/helpers/finalize_child.ts <kv path> <audit id> <pages> <probe,…>
 *
 * @module
 */
import { keys, read } from "../../domain/platform/mod.ts";
import { finalizeCrawl } from "../../domain/audit_engine/crawl/finalize.ts";
import { synthState, synthUrl } from "./synthetic_crawl.ts";

/** A field of /proc/self/status in bytes (Linux; 0 elsewhere). */
function procStatus(field: "VmHWM" | "VmRSS" | "RssAnon" | "RssFile"): number {
  try {
    const m = Deno.readTextFileSync("/proc/self/status").match(new RegExp(`${field}:\\s+(\\d+)`));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

const [path, auditId, pages, probeArg] = Deno.args;
const n = Number(pages);
const probe = (probeArg ?? "").split(",").filter(Boolean).map(Number);
const kv = await Deno.openKv(path);
const before = procStatus("VmRSS");
let heapPeak = Deno.memoryUsage().heapUsed;
let externalPeak = Deno.memoryUsage().external;
let rssPeak = before;
const sampler = setInterval(() => {
  const m = Deno.memoryUsage();
  heapPeak = Math.max(heapPeak, m.heapUsed);
  // ArrayBuffers (the passes' typed arrays) are V8's external memory.
  externalPeak = Math.max(externalPeak, m.external);
  rssPeak = Math.max(rssPeak, m.rss);
}, 20);
const t0 = performance.now();
const outcome = await finalizeCrawl(kv, auditId, synthState(n));
const secs = (performance.now() - t0) / 1000;
clearInterval(sampler);
const records: Record<number, { inlinks: number; linkScore: number | null }> = {};
for (const p of probe) {
  const r = await read(kv, keys.auditPage(auditId, synthUrl(p)));
  if (r.value) records[p] = { inlinks: r.value.inlinks, linkScore: r.value.linkScore ?? null };
}
// The first stored item of the link findings (their target URLs are read back from KV).
const first: Record<string, unknown> = {};
for (const check of ["broken_internal_links", "internal_redirect_links"]) {
  for await (const e of kv.list({ prefix: keys.auditFindings(auditId, check) }, { limit: 1 })) {
    first[check] = e.value;
  }
}
kv.close();
console.log(JSON.stringify({
  first,
  hwm: procStatus("VmHWM"),
  anon: procStatus("RssAnon"),
  file: procStatus("RssFile"),
  before,
  rssPeak,
  heapPeak,
  externalPeak,
  secs,
  tallies: outcome.tallies,
  records,
}));
