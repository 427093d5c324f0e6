/**
 * A generated site of N pages for the crawl benchmarks, run as its own process so its memory is
 * not counted with the service's. Page i links 20 pseudo-random pages and the next one; every
 * 500th page has no title and links a missing page. `GET /__stats` answers how many requests
 * were served and how many paths were requested more than once. Prints its port on stdout.
 *
 * With a second argument `resources`, every page also loads a shared stylesheet and script and
 * one of 2,000 images, of which every 100th is missing (404): the `broken_resources` workload.
 *
 * With an argument `delay=<ms>`, every page answers after that delay (a realistic server's
 * latency, for the partitioned crawl's bench).
 *
 * With an argument `kb=<n>`, every page's article grows to about n KB of HTML (sections of
 * paragraphs with inline markup, as a real article has): the issue's ~15 KB pages are `kb=15`.
 *
 * With an argument `validators`, pages send an ETag and a Last-Modified and answer 304 to a
 * matching `If-None-Match`; `POST /__change?percent=5` then changes that share of the pages (a
 * seeded choice: their text, so their ETag), for an incremental re-audit. `/__stats` also says
 * the HTML bytes sent and the 304s answered.
 *
 * Run: deno run -A tests/bench/servers/big_site.ts 100000 [resources] [validators] [delay=50] [kb=15]
 */
const N = Number(Deno.args[0] ?? 1000);
const RESOURCES = Deno.args.includes("resources");
const VALIDATORS = Deno.args.includes("validators");
const DELAY_MS = Number(Deno.args.find((a) => a.startsWith("delay="))?.slice(6) ?? 0);
const PAGE_BYTES = 1024 * Number(Deno.args.find((a) => a.startsWith("kb="))?.slice(3) ?? 0);
/** Pages i with `(i * 7919) % 100 < changed` serve their second version. */
let changed = 0;
let htmlBytes = 0;
let notModified = 0;
const isChanged = (i: number) => (i * 7919) % 100 < changed;
const encoder = new TextEncoder();
const IMAGES = 2_000;
const WORDS = ("search engines read pages quickly when the markup is clean and the links are " +
  "plain and every heading says what follows in a few honest words").split(" ");
const CSS = { "content-type": "text/css" };
const JS = { "content-type": "text/javascript" };
const PNG = new Uint8Array(2_048);
const seen = new Map<string, number>();
let served = 0;

function pageHtml(i: number): string {
  const links: string[] = [];
  for (let k = 1; k <= 20; k++) links.push(`/p/${(i * 7 + k * 13) % N}`);
  if (i + 1 < N) links.push(`/p/${i + 1}`);
  if (i % 500 === 7) links.push(`/gone/${i}`);
  const words: string[] = [];
  const shift = isChanged(i) ? 1 : 0;
  for (let k = 0; k < 300; k++) words.push(WORDS[(i + k * 3 + shift) % WORDS.length]);
  const article: string[] = [];
  for (let section = 0, bytes = 1400 + words.length * 6; bytes < PAGE_BYTES; section++) {
    const part =
      `<section class="article-part" id="part-${section}"><h2>Part ${section} of page ${i}` +
      `</h2><p class="lede">${words.slice(section % 50, (section % 50) + 40).join(" ")} <em>${
        WORDS[(i + section) % WORDS.length]
      }</em> and <strong>${WORDS[(i * 3 + section) % WORDS.length]}</strong>.</p><p>${
        words.slice((section * 7) % 200, ((section * 7) % 200) + 90).join(" ")
      } <a href="/p/${(i * 11 + section * 17) % N}">more</a>.</p></section>\n`;
    article.push(part);
    bytes += part.length;
  }
  const title = i % 500 === 7 ? "" : `<title>Generated page number ${i} of the big site</title>`;
  const assets = RESOURCES
    ? `<link rel="stylesheet" href="/app.css"><script src="/app.js" defer></script>`
    : "";
  const image = RESOURCES ? `<img src="/img/${i % IMAGES}.png" alt="Figure ${i}">` : "";
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">${title}
<meta name="description" content="Benchmark page ${i}: a generated page with enough text and links to look real.">
<meta name="viewport" content="width=device-width, initial-scale=1">${assets}</head><body>
<nav><ul>${links.map((l, k) => `<li><a href="${l}">Topic ${k}</a></li>`).join("")}</ul></nav>
<main><h1>Page ${i}</h1>${image}<p>${words.join(" ")} ${i}.</p>${
    article.join("")
  }</main></body></html>`;
}

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
  const path = new URL(req.url).pathname;
  if (path === "/__stats") {
    let twice = 0;
    for (const n of seen.values()) if (n > 1) twice++;
    return Response.json({ served, distinct: seen.size, twice, htmlBytes, notModified });
  }
  if (path === "/__change") {
    changed = Number(new URL(req.url).searchParams.get("percent") ?? 0);
    let pages = 0;
    for (let i = 0; i < N; i++) if (isChanged(i)) pages++;
    return Response.json({ changed: pages });
  }
  if (DELAY_MS > 0) await new Promise((r) => setTimeout(r, DELAY_MS));
  served++;
  seen.set(path, (seen.get(path) ?? 0) + 1);
  if (path === "/robots.txt") return new Response("User-agent: *\nDisallow:\n");
  if (RESOURCES) {
    if (path === "/app.css") return new Response("body{margin:0}", { headers: CSS });
    if (path === "/app.js") return new Response("void 0;", { headers: JS });
    const img = /^\/img\/(\d+)\.png$/.exec(path);
    if (img) {
      if (Number(img[1]) % 100 === 99) return new Response("missing", { status: 404 });
      return new Response(PNG, { headers: { "content-type": "image/png" } });
    }
  }
  const m = /^\/p\/(\d+)$/.exec(path);
  const i = path === "/" ? 0 : m ? Number(m[1]) : -1;
  if (i < 0 || i >= N) return new Response("not found", { status: 404 });
  const headers: Record<string, string> = {
    "content-type": "text/html; charset=utf-8",
    "content-encoding": "identity",
  };
  if (VALIDATORS) {
    const etag = `"p${i}-v${isChanged(i) ? 2 : 1}"`;
    headers.etag = etag;
    headers["last-modified"] = isChanged(i)
      ? "Wed, 25 Nov 2026 10:00:00 GMT"
      : "Sun, 01 Nov 2026 10:00:00 GMT";
    if (req.headers.get("if-none-match") === etag) {
      notModified++;
      return new Response(null, { status: 304, headers: { etag } });
    }
  }
  const body = encoder.encode(pageHtml(i));
  htmlBytes += body.byteLength;
  return new Response(body, { headers });
});
console.log(server.addr.port);
