/**
 * Sitemap reading for the crawl's first step: the sitemaps robots.txt declares (else
 * `/sitemap.xml`), indexes followed, gzip inflated as a stream with a cap on the inflated size
 * (a 10 MiB download may not become gigabytes in memory: the old whole-body inflate was a
 * decompression bomb), and the XML parsed as it streams. Listed same-site URLs are written to KV
 * as they come, in chunks, and never held beyond a dedupe set capped at `maxUrls`.
 *
 * @module
 */
import type { Robots } from "../robots.ts";
import { SITEMAP_MAX_BYTES, SITEMAP_MAX_URLS, SitemapStream } from "../sitemap.ts";
import type { SitemapInfo } from "../types.ts";
import { canonicalize } from "../urls.ts";
import { siteKeyOf } from "../page_facts.ts";
import { fetchFollow, type FetchSettings } from "./fetcher.ts";
import type { CapName } from "./caps.ts";
import { BudgetSpentError } from "./byte_budget.ts";
import { yieldToLoop } from "./event_loop.ts";

/** Bytes downloaded per sitemap file (compressed or not); beyond it the file is cut. */
export const SITEMAP_DOWNLOAD_BYTES = 10 * 1024 * 1024;
const MAX_PROBLEMS = 20;

/** Feeds decoded text of `bytes` (gzip or plain) to `sink`, stopping after `maxOut` bytes. */
export async function streamText(
  bytes: Uint8Array,
  maxOut: number,
  sink: (text: string) => void,
): Promise<{ outBytes: number; capped: boolean; gzipError: boolean }> {
  const decoder = new TextDecoder();
  let out = 0;
  const gz = bytes[0] === 0x1f && bytes[1] === 0x8b;
  if (!gz) {
    const SLICE = 256 * 1024;
    for (let i = 0; i < bytes.byteLength && out < maxOut; i += SLICE) {
      const part = bytes.subarray(i, Math.min(bytes.byteLength, i + SLICE, i + maxOut - out));
      out += part.byteLength;
      sink(decoder.decode(part, { stream: true }));
      // Parsing megabytes of XML is long synchronous work: let the process breathe between slices.
      await yieldToLoop();
    }
    sink(decoder.decode());
    return { outBytes: out, capped: out >= maxOut && bytes.byteLength > maxOut, gzipError: false };
  }
  const reader = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream()
    .pipeThrough(new DecompressionStream("gzip")).getReader();
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      const room = maxOut - out;
      const chunk = value.byteLength > room ? value.subarray(0, room) : value;
      out += chunk.byteLength;
      sink(decoder.decode(chunk, { stream: true }));
      if (out >= maxOut) {
        await reader.cancel();
        sink(decoder.decode());
        return { outBytes: out, capped: true, gzipError: false };
      }
    }
  } catch {
    return { outBytes: out, capped: false, gzipError: true };
  }
  sink(decoder.decode());
  return { outBytes: out, capped: false, gzipError: false };
}

/** What the sitemaps of one audit may make the crawl read and keep (crawl/caps.ts). */
export interface SitemapCaps {
  /** Files read (indexes included). */
  files: number;
  /** Distinct URLs kept. */
  urls: number;
  /** Text read once inflated, over all files. */
  bytes: number;
}

/**
 * Reads the site's sitemaps. `onUrl` receives each distinct same-site URL once (at most
 * `caps.urls`); the result says what the sitemap checks need, `onCap` what a cap left out.
 */
export async function readSitemaps(
  s: FetchSettings,
  input: {
    origin: string;
    siteKey: string;
    robots: Robots;
    caps: SitemapCaps;
    onCap: (name: CapName, limit: number, leftOut: number) => void;
  },
  onUrl: (url: string) => void,
): Promise<SitemapInfo> {
  const info: SitemapInfo = { found: false, problems: [], urlCount: 0 };
  const problem = (p: string) => info.problems.length < MAX_PROBLEMS && info.problems.push(p);
  const declared = input.robots.sitemaps.length > 0;
  const queue = declared ? [...input.robots.sitemaps] : [`${input.origin}/sitemap.xml`];
  const seenFiles = new Set<string>();
  const seenUrls = new Set<string>();
  const { caps } = input;
  let textLeft = caps.bytes;
  let urlsOver = 0;
  let filesOver = 0;
  // Sitemaps may take half of a byte budget at most: the pages are what the audit is for.
  let downloadLeft = s.budget?.limit !== undefined
    ? Math.floor(s.budget.limit / 2)
    : Number.POSITIVE_INFINITY;
  while (queue.length > 0 && seenFiles.size < caps.files) {
    const url = queue.shift()!;
    if (seenFiles.has(url)) continue;
    seenFiles.add(url);
    const parsedUrl = canonicalize(url);
    if (parsedUrl === null) {
      problem(`sitemap URL ${url} is not absolute`);
      continue;
    }
    if (!input.robots.isAllowed(parsedUrl, "Googlebot")) {
      problem(`sitemap ${url} is blocked by robots.txt`);
      continue;
    }
    if (downloadLeft <= 0) {
      input.onCap("bytes", s.budget!.limit!, 1 + queue.length);
      info.partial = true;
      queue.length = 0;
      break;
    }
    const downloadCap = Math.min(SITEMAP_DOWNLOAD_BYTES, downloadLeft);
    const { res, error } = await fetchFollow(s, parsedUrl, {
      readBody: true,
      maxBytes: downloadCap,
    });
    if (error instanceof BudgetSpentError) {
      input.onCap("bytes", s.budget!.limit!, 1 + queue.length);
      info.partial = true;
      queue.length = 0;
      break;
    }
    if (res) downloadLeft -= res.body.byteLength;
    if (!res || res.status !== 200) {
      if (declared) problem(`sitemap ${url} answers ${res?.status ?? "no response"}`);
      continue;
    }
    let offsite = 0;
    const stream = new SitemapStream((loc) => {
      const c = /^https?:\/\//i.test(loc) ? canonicalize(loc) : null;
      if (c === null || siteKeyOf(new URL(c)) !== input.siteKey) {
        offsite++;
        return;
      }
      if (seenUrls.has(c)) return;
      if (seenUrls.size >= caps.urls) urlsOver++;
      else {
        seenUrls.add(c);
        onUrl(c);
      }
    }, (child) => {
      if (queue.length + seenFiles.size < caps.files) queue.push(child);
      else filesOver++;
    });
    const room = Math.min(SITEMAP_MAX_BYTES, textLeft);
    const text = await streamText(res.body, room, (t) => stream.write(t));
    textLeft -= text.outBytes;
    // Cut by one of our caps rather than by the sitemap protocol's limits: not the site's fault.
    const cutByBytes = res.truncated && downloadCap < SITEMAP_DOWNLOAD_BYTES;
    const cutByText = text.capped && room < SITEMAP_MAX_BYTES;
    if (cutByBytes) input.onCap("bytes", s.budget!.limit!, 1);
    if (cutByText) input.onCap("sitemap_bytes", caps.bytes, 1);
    if (cutByBytes || cutByText) info.partial = true;
    if (text.gzipError && !cutByBytes) {
      problem(`sitemap ${url} is not valid gzip`);
      continue;
    }
    stream.end();
    if ((res.truncated && !cutByBytes) || (text.capped && !cutByText)) {
      problem(`sitemap ${url} is larger than ${res.truncated ? "10 MiB to download" : "50 MB"}`);
    }
    if (stream.root !== "urlset" && stream.root !== "sitemapindex") {
      problem(`sitemap ${url} root is <${stream.root ?? "nothing"}>`);
      continue;
    }
    info.found = true;
    if (stream.errors.length > 0 && !res.truncated && !text.capped) {
      problem(`sitemap ${url} is not well-formed XML`);
    }
    if (stream.totalEntries > SITEMAP_MAX_URLS) {
      problem(`sitemap ${url} lists more than 50,000 entries`);
    }
    if (offsite > 0) problem(`sitemap ${url} has ${offsite} relative or off-site <loc>`);
  }
  filesOver += queue.length;
  if (filesOver > 0) input.onCap("sitemap_files", caps.files, filesOver);
  if (urlsOver > 0) input.onCap("sitemap_urls", caps.urls, urlsOver);
  if (filesOver > 0 || urlsOver > 0) info.partial = true;
  info.urlCount = seenUrls.size;
  return info;
}
