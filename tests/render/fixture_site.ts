/**
 * A loopback site whose pages each carry one defect that only rendering shows (plus clean
 * pages that must not fire anything), for the render engine's tests.
 */
import type { NetworkPolicy } from "../../domain/render/guarded_network.ts";

/**
 * The service's network policy for rendered pages with loopback allowed for the fixtures: private,
 * link-local and metadata addresses stay refused. `rebind.test` resolves to loopback and
 * `metadata.test` to the metadata address in this resolver only (the /guarded page).
 */
export const FIXTURE_NETWORK: NetworkPolicy = {
  allowPrivate: false,
  allowLoopback: true,
  resolver: (host) => {
    if (host === "rebind.test") return Promise.resolve(["127.0.0.1"]);
    if (host === "metadata.test") return Promise.resolve(["169.254.169.254"]);
    return Promise.resolve([]);
  },
};

/**
 * A page's deadline, ms, where a test is about what a render finds, not how fast: the suite runs
 * browsers in parallel files on 2 cores, where a page once took past the 20 s default. The
 * deadline itself is tested in render.test.ts ("a hung page times out").
 */
export const UNHURRIED_MS = 60_000;

const VIEWPORT = `<meta name="viewport" content="width=device-width, initial-scale=1">`;
const STYLE = `<style>body{font:16px/1.5 sans-serif;margin:16px}a{display:inline-block;` +
  `min-height:48px;min-width:48px;padding:12px}</style>`;
const WORDS = "the quick brown fox jumps over the lazy dog while the reader keeps on reading";

/** `n` words of plain prose. */
export function prose(n: number): string {
  const w = WORDS.split(" ");
  return Array.from({ length: n }, (_, i) => w[i % w.length]).join(" ");
}

/** A mobile-ready page (viewport, 16 px text, 48 px tap targets) with this title and body. */
export function page(title: string, body: string, head = ""): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">${VIEWPORT}${STYLE}` +
    `<title>${title}</title>${head}</head><body>${body}</body></html>`;
}

/** A ~`kb` KiB SVG image (padding in a comment), drawn 360 x 300. */
function bigSvg(kb: number): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="360" height="300">` +
    `<rect width="360" height="300" fill="#4a7"/><!--${"x".repeat(kb * 1024)}--></svg>`;
}

export const PAGES: Record<string, string> = {
  "/clean": page(
    "A clean page",
    `<h1>Clean</h1><p>${prose(150)}</p><p><a href="/other">Other page</a></p>`,
    `<link rel="canonical" href="/clean">`,
  ),
  "/other": page("Other", `<h1>Other</h1><p>${prose(120)}</p><a href="/clean">Back</a>`),
  "/noindex-removed": page(
    "Noindex removed",
    `<h1>Noindex removed</h1><p>${prose(60)}</p>` +
      `<script>document.querySelector('meta[name=robots]').remove()</script>`,
    `<meta name="robots" content="noindex">`,
  ),
  "/links-by-js": page(
    "Links by JS",
    `<h1>Links</h1><p>${prose(60)}</p><nav id="menu"><a href="/clean">Clean</a></nav><script>
      for (const p of ["/js-one", "/js-two"]) {
        const a = document.createElement("a"); a.href = p; a.textContent = p;
        document.getElementById("menu").append(a);
      }</script>`,
  ),
  "/content-by-js": page(
    "App",
    `<div id="root"></div><script>
      document.getElementById("root").innerHTML = "<h1>Loaded</h1><p>${prose(180)}</p>";
      document.title = "App loaded";</script>`,
  ),
  "/tiny-text": page(
    "Tiny text",
    `<h1>Tiny</h1><p style="font-size:9px">${prose(120)}</p>`,
  ),
  "/tiny-taps": page(
    "Tiny taps",
    `<h1>Taps</h1><p>${prose(40)}</p><div>${
      Array.from({ length: 8 }, (_, i) =>
        `<a href="/t${i}" style="display:inline;min-height:0;min-width:0;padding:0;` +
        `font-size:16px">${i}</a>`).join(" ")
    }</div>`,
  ),
  // WebMCP (domain/render/agent_view.ts): one valid tool, and two the draft's shape rejects.
  "/webmcp-ok": page(
    "WebMCP",
    `<h1>Tools</h1><p>${prose(40)}</p><script>
      navigator.modelContext.registerTool({
        name: "search_products", description: "Search the catalogue by keyword.",
        inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
        execute: async () => ({ content: [] }),
      });</script>`,
  ),
  "/webmcp-bad": page(
    "WebMCP bad",
    `<h1>Tools</h1><p>${prose(40)}</p><script>
      document.modelContext.provideContext({ tools: [
        { name: "add to cart", description: "Adds an item.", execute: () => null },
        { name: "checkout", inputSchema: { type: "string" }, execute: () => null },
      ] });</script>`,
  ),
  // A button and a link with no accessible name, and a made-up role: agents cannot use them.
  "/unnamed-controls": page(
    "Unnamed controls",
    `<h1>Controls</h1><p>${prose(40)}</p><p><button style="width:60px;height:60px"></button></p>` +
      `<a href="/clean"><img src="/pixel.svg" width="24" height="24"></a>` +
      `<div role="fancybutton">x</div>`,
  ),
  "/too-wide": page(
    "Too wide",
    `<h1>Wide</h1><p>${prose(40)}</p><div id="banner" style="width:1000px;height:40px">b</div>`,
  ),
  "/guarded": page(
    "Guarded",
    `<h1>Guarded</h1><p>${prose(40)}</p>` +
      `<img src="http://169.254.169.254/latest/meta-data/" alt="">` +
      `<img src="http://10.0.0.1/internal.png" alt="">` +
      `<img src="http://metadata.test/computeMetadata/v1/" alt="">` +
      `<img id="ok" src="http://rebind.test:PORT/pixel.svg" alt="" width="10" height="10">` +
      `<iframe src="http://192.168.1.1/"></iframe>` +
      `<script>try { new WebSocket("ws://127.0.0.1:PORT/ws"); } catch (_) {}
        fetch("http://[::ffff:10.0.0.2]/").catch(() => {});</script>`,
  ),
  "/pixel.svg": `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`,
  "/redirect-me": "",
  "/hang-js": page("Hang", `<h1>Hang</h1><script>while (true) {}</script>`),
  "/lab-lcp": page(
    "Slow LCP",
    `<h1 style="font-size:14px">Photo</h1><img src="/big.svg" width="360" height="300" alt="">`,
  ),
  "/big.svg": bigSvg(300),
  "/lab-shift": page(
    "Shift and block",
    `<h1>Shift</h1><div id="slot"></div><p>${prose(80)}</p><script>
      // 300 ms after the first paint, not after this script: a shift before the first paint is
      // no shift, and a task before it no blocking time (a loaded machine painted late, and the
      // page then showed neither).
      new PerformanceObserver((list, obs) => {
        if (!list.getEntries().some((e) => e.name === "first-contentful-paint")) return;
        obs.disconnect();
        setTimeout(() => {
          document.getElementById("slot").innerHTML = '<div style="height:300px;background:#ccc">ad</div>';
          const s = Date.now(); while (Date.now() - s < 350) {}
        }, 300);
      }).observe({ type: "paint", buffered: true });</script>`,
  ),
};

export interface FixtureSite {
  origin: string;
  port: number;
  /** Paths requested, in order (every one reached us through the guarded fetch). */
  hits: string[];
  /** Resolves when `/hold` was requested; the response waits for `release()`. */
  held: Promise<void>;
  release: () => void;
  close: () => Promise<void>;
}

export function startFixtureSite(): FixtureSite {
  const hits: string[] = [];
  let heldResolve!: () => void;
  const held = new Promise<void>((r) => heldResolve = r);
  let releaseResolve!: () => void;
  const released = new Promise<void>((r) => releaseResolve = r);
  let port = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    hits.push(path);
    if (path === "/redirect-me") {
      return new Response(null, { status: 301, headers: { location: "/clean" } });
    }
    if (path === "/hold") {
      heldResolve();
      await released;
      return new Response(page("Held", "<h1>Held</h1>"), {
        headers: { "content-type": "text/html" },
      });
    }
    const body = PAGES[path];
    if (body === undefined) return new Response("not found", { status: 404 });
    const type = path.endsWith(".svg") ? "image/svg+xml" : "text/html; charset=utf-8";
    return new Response(body.replaceAll("PORT", String(port)), {
      headers: { "content-type": type },
    });
  });
  port = server.addr.port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    hits,
    held,
    release: () => releaseResolve(),
    close: async () => {
      releaseResolve();
      await server.shutdown();
    },
  };
}
