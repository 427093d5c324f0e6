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

/** Sitemap files read per audit. */
export const MAX_SITEMAP_FILES = 20;
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
    const SLICE = 1 << 20;
    for (let i = 0; i < bytes.byteLength && out < maxOut; i += SLICE) {
      const part = bytes.subarray(i, Math.min(bytes.byteLength, i + SLICE, i + maxOut - out));
      out += part.byteLength;
      sink(decoder.decode(part, { stream: true }));
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

/**
 * Reads the site's sitemaps. `onUrl` receives each distinct same-site URL once (at most
 * `maxUrls`); the result says what the sitemap checks need.
 */
export async function readSitemaps(
  s: FetchSettings,
  input: { origin: string; siteKey: string; robots: Robots; maxUrls: number },
  onUrl: (url: string) => void,
): Promise<SitemapInfo> {
  const info: SitemapInfo = { found: false, problems: [], urlCount: 0 };
  const problem = (p: string) => info.problems.length < MAX_PROBLEMS && info.problems.push(p);
  const declared = input.robots.sitemaps.length > 0;
  const queue = declared ? [...input.robots.sitemaps] : [`${input.origin}/sitemap.xml`];
  const seenFiles = new Set<string>();
  const seenUrls = new Set<string>();
  const maxUrls = Math.max(SITEMAP_MAX_URLS, input.maxUrls);
  while (queue.length > 0 && seenFiles.size < MAX_SITEMAP_FILES) {
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
    const { res } = await fetchFollow(s, parsedUrl, {
      readBody: true,
      maxBytes: SITEMAP_DOWNLOAD_BYTES,
    });
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
      if (seenUrls.size < maxUrls && !seenUrls.has(c)) {
        seenUrls.add(c);
        onUrl(c);
      }
    }, (child) => queue.length < MAX_SITEMAP_FILES && queue.push(child));
    const text = await streamText(res.body, SITEMAP_MAX_BYTES, (t) => stream.write(t));
    if (text.gzipError) {
      problem(`sitemap ${url} is not valid gzip`);
      continue;
    }
    stream.end();
    if (res.truncated || text.capped) {
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
  info.urlCount = seenUrls.size;
  return info;
}
