/**
 * Fake websites for the tests: real `Deno.serve` servers on 127.0.0.1 port 0, each route a
 * canned response with known defects. Always `close()` them (test sanitizers are on).
 */
import { BOT_CLASSES } from "../../domain/audit_engine/checks/agents.ts";
import { probeUserAgent } from "../../domain/audit_engine/crawl/agent_probes.ts";

/** The User-Agents of the audit's agents probes (crawl/agent_probes.ts): bot classes, browser. */
const PROBE_AGENTS = new Set([
  probeUserAgent(null),
  ...Object.values(BOT_CLASSES).flat().map((t) => probeUserAgent(t)),
]);

/**
 * A request from the agents step's probes (each bot class's token, a browser), which ask for
 * sampled pages and discovery documents on purpose: tests about the crawl's own requests leave
 * them out.
 */
export function isAgentProbe(userAgent: string | null): boolean {
  return PROBE_AGENTS.has(userAgent ?? "");
}

export interface Route {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
  /** Delay before answering, ms. */
  delayMs?: number;
  /** Serve HTML uncompressed even when the client accepts gzip. */
  noCompress?: boolean;
  /**
   * A firewall: 403 to a request whose User-Agent contains one of these tokens (a CDN block
   * robots.txt does not show); everyone else gets the route.
   */
  refuseAgents?: string[];
  /** Served as text/markdown to a request whose Accept names text/markdown (Markdown on request). */
  markdown?: string;
  /** Full control when the canned fields are not enough. */
  handler?: (req: Request) => Response | Promise<Response>;
}

export interface FakeSite {
  origin: string;
  url: (path: string) => string;
  /** Paths requested, in order (the agents probes' requests are in `probeHits` instead). */
  hits: string[];
  /** Paths the agents probes requested (`isAgentProbe`), in order. */
  probeHits: string[];
  close: () => Promise<void>;
}

const CERT_DIR = new URL("./fixtures/", import.meta.url);
export const TEST_CA = Deno.readTextFileSync(new URL("cert.pem", CERT_DIR));
const TEST_KEY = Deno.readTextFileSync(new URL("key.pem", CERT_DIR));

/** Headers a well-run https site sends with its HTML. */
export const GOOD_HEADERS: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  "strict-transport-security": "max-age=63072000; includeSubDomains",
  "content-security-policy": "default-src 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "strict-origin-when-cross-origin",
};

/**
 * Serves `routes` (path incl. query → Route, or a function of the path). Unknown paths answer
 * 404 text/html. `tls: true` serves https with the fixture certificate (trust it with TEST_CA).
 */
export function serveSite(
  routes: Record<string, Route> | ((path: string) => Route | undefined),
  opts: { tls?: boolean } = {},
): FakeSite {
  const hits: string[] = [];
  const probeHits: string[] = [];
  const lookup = typeof routes === "function" ? routes : (p: string) => routes[p];
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const ac = new AbortController();
  const handler = async (req: Request): Promise<Response> => {
    const u = new URL(req.url);
    const path = u.pathname + u.search;
    (isAgentProbe(req.headers.get("user-agent")) ? probeHits : hits).push(path);
    const r = lookup(path);
    if (!r) {
      return new Response("<!doctype html><title>Not found</title>", {
        status: 404,
        headers: { "content-type": "text/html; charset=utf-8" },
      });
    }
    if (r.delayMs) {
      await new Promise<void>((res) => {
        const t = setTimeout(() => {
          timers.delete(t);
          res();
        }, r.delayMs);
        timers.add(t);
        ac.signal.addEventListener("abort", () => {
          clearTimeout(t);
          timers.delete(t);
          res();
        });
      });
    }
    if (r.handler) return r.handler(req);
    const ua = req.headers.get("user-agent") ?? "";
    if (r.refuseAgents?.some((t) => ua.includes(t))) {
      return new Response("<!doctype html><title>Access denied</title>", {
        status: 403,
        headers: { "content-type": "text/html" },
      });
    }
    if (r.markdown !== undefined && (req.headers.get("accept") ?? "").includes("text/markdown")) {
      return new Response(r.markdown, {
        headers: { "content-type": "text/markdown; charset=utf-8", vary: "accept" },
      });
    }
    const headers = new Headers(r.headers ?? GOOD_HEADERS);
    const gzip = !r.noCompress && typeof r.body === "string" &&
      (headers.get("content-type") ?? "").includes("html") &&
      (req.headers.get("accept-encoding") ?? "").includes("gzip");
    if (gzip) {
      // Real servers compress HTML; Deno.serve does not do it for us here.
      headers.set("content-encoding", "gzip");
      const zipped = new Blob([r.body as string]).stream().pipeThrough(
        new CompressionStream("gzip"),
      );
      return new Response(zipped, { status: r.status ?? 200, headers });
    }
    return new Response(r.body ?? null, { status: r.status ?? 200, headers });
  };
  const server = opts.tls
    ? Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      cert: TEST_CA,
      key: TEST_KEY,
      onListen() {},
      signal: ac.signal,
    }, handler)
    : Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {}, signal: ac.signal }, handler);
  const origin = `${opts.tls ? "https" : "http"}://127.0.0.1:${server.addr.port}`;
  return {
    origin,
    url: (p) => origin + p,
    hits,
    probeHits,
    close: async () => {
      ac.abort();
      for (const t of timers) clearTimeout(t);
      await server.finished;
    },
  };
}

const VOCABULARY =
  ("audit crawl page link title header search engine index sitemap robots canonical " +
    "redirect status server browser script image style content heading paragraph keyword owner " +
    "customer product service garden kitchen travel bicycle museum harbour mountain river forest " +
    "winter summer autumn spring morning evening market bakery library station theatre concert " +
    "painter teacher doctor farmer sailor pilot writer careful quick honest bright quiet gentle " +
    "simple modern ancient local famous useful friendly patient clever steady build explain fix " +
    "measure compare follow share read write visit choose improve protect grow carry open close")
    .split(" ");

/**
 * About 320 words of filler, distinct for each key (a seeded choice of words), so pages with
 * different keys are neither duplicates nor near-duplicates; the same key gives the same text.
 */
function filler(key: string): string {
  let seed = 2166136261;
  for (let i = 0; i < key.length; i++) seed = Math.imul(seed ^ key.charCodeAt(i), 16777619);
  const words: string[] = [];
  for (let i = 0; i < 320; i++) {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    words.push(VOCABULARY[((t ^ (t >>> 14)) >>> 0) % VOCABULARY.length]);
    if (i % 12 === 11) words[i] += ".";
  }
  return words.join(" ");
}

export interface PageSpec {
  title?: string | null;
  description?: string | null;
  h1?: string | null;
  lang?: string | null;
  viewport?: string | null;
  /** false: no doctype; a string: that doctype instead of `<!DOCTYPE html>`. */
  doctype?: boolean | string;
  head?: string;
  body?: string;
  links?: string[];
  words?: boolean;
  /** Makes the visible text unique (duplicate-content detection). */
  key?: string;
  /** The manifest's base pages carry a JSON-LD block unless this is false. */
  jsonLd?: boolean;
}

/** A clean HTML page (every on-page check passes) with the given overrides. */
export function page(spec: PageSpec = {}): string {
  const title = spec.title === undefined ? "A well made page about technical SEO" : spec.title;
  const desc = spec.description === undefined
    ? "A clean test page with a helpful description that is long enough for search results."
    : spec.description;
  const h1 = spec.h1 === undefined ? "Technical SEO made simple" : spec.h1;
  const lang = spec.lang === undefined ? "en" : spec.lang;
  const viewport = spec.viewport === undefined
    ? "width=device-width, initial-scale=1"
    : spec.viewport;
  const links = (spec.links ?? []).map((l, i) => `<li><a href="${l}">Guide number ${i}</a></li>`)
    .join("");
  return [
    spec.doctype === false
      ? ""
      : typeof spec.doctype === "string"
      ? spec.doctype
      : "<!DOCTYPE html>",
    lang === null ? "<html>" : `<html lang="${lang}">`,
    '<head><meta charset="utf-8">',
    title === null ? "" : `<title>${title}</title>`,
    desc === null ? "" : `<meta name="description" content="${desc}">`,
    viewport === null ? "" : `<meta name="viewport" content="${viewport}">`,
    spec.head ?? "",
    "</head><body>",
    h1 === null ? "" : `<h1>${h1}</h1>`,
    `<nav><ul>${links}</ul></nav>`,
    spec.words === false
      ? ""
      : `<main><h2>Overview</h2><p>Page ${spec.key ?? ""}. ${filler(spec.key ?? "")}</p></main>`,
    spec.body ?? "",
    "</body></html>",
  ].join("\n");
}

/** An HTML route with good headers. */
export function html(body: string, extra: Record<string, string> = {}, status = 200): Route {
  return { status, body, headers: { ...GOOD_HEADERS, ...extra } };
}

export function robotsRoute(text: string): Route {
  return { body: text, headers: { "content-type": "text/plain" } };
}

export function sitemapRoute(urls: string[]): Route {
  return {
    body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${urls.map((u) => `<url><loc>${u}</loc></url>`).join("\n")}
</urlset>`,
    headers: { "content-type": "application/xml" },
  };
}
