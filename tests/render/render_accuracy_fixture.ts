/**
 * The seeded-defect fixture of the render accuracy table (render_accuracy.test.ts): one loopback
 * site whose defects only a browser sees, each of the 19 render checks seeded on at least one
 * page, with the ground-truth manifest of the exact URLs each check's stored findings must name
 * and pages on which no render check may fire. The DOM defects reuse the render engine's fixture
 * pages (fixture_site.ts) where they fit.
 *
 * Which pages get lab metrics is decided by the audit's sample (domain/render/sample.ts): the home
 * page, then each path template's most linked page. This site has six templates (`/`, `/*`,
 * `/lcp/*`, `/cls/*`, `/tbt/*`, `/heavy/*`) and the test renders with LAB_PAGES = 6, so the lab
 * sample is all of them whatever their order: the home page, `/clean` (linked from every page, the
 * most linked of `/*`) and the four lab-defect pages, one per template. Every other page is
 * rendered for the DOM and mobile checks only.
 *
 * The lab defects are built to be far from their thresholds on a loaded machine, with bounds
 * that hold by construction, not by luck of timing:
 *
 * - `lcp_slow`: the page's only large element is an image the server answers after 3 s; it is
 *   requested once the document has arrived (at >= 562.5 ms of simulated latency), so LCP is
 *   above 3.5 s whatever the machine does (threshold 2.5 s).
 * - `cls_high`: two frames after the first paint, a script opens a 400 px empty slot above the
 *   text that fills the screen: one shift of about 0.46 (threshold 0.1). The slot has no
 *   content, so it is no LCP candidate.
 * - `tbt_high`: two frames after the first paint, a script keeps the main thread busy for
 *   1.5 s of wall-clock time (CPU throttling cannot shorten it): TBT about 1,450 ms
 *   (threshold 200 ms).
 * - Both pages hold a request open until their defect has happened (`watched`), so the audit,
 *   which waits for network quiet, cannot stop looking before it (it did, under load, when the
 *   defect ran on a timer).
 * - `transfer_size_large`: while it loads, the page fetches three 2 MiB data files (6,144 KiB,
 *   threshold 5,000 KiB), at parse time rather than on `load`, so they are in flight before the
 *   audit starts waiting for network quiet. The renderer counts bytes when the guarded fetch has
 *   them, before the simulated slow-4G link would have carried them (that would take 34 s), so
 *   the render does not wait for the link: it ends at the settle limit (5 s), bytes counted.
 *
 * The quiet lab pages (home, `/clean`, and each lab page for the other three metrics) are small
 * static pages: LCP about 1 s, no scripts that run long, no late layout changes. Their side is
 * wall-clock time all the same, which a CPU-starved machine stretches; the test renders one page
 * at a time for that reason (see docs/audit.md, "Audit accuracy table").
 *
 * @module
 */
import type { Labelled } from "../audit_engine/accuracy_table.ts";
import { GOOD_HEADERS, type Route } from "../helpers/sites.ts";
import { page, PAGES, prose } from "./fixture_site.ts";

/** Lab pages the test's render plan asks for: one per template of this site (see above). */
export const LAB_PAGES = 6;

/** The fixture's pages run inline scripts and styles. */
const HEADERS = {
  ...GOOD_HEADERS,
  "content-security-policy": "default-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
};
const doc = (body: string, headers: Record<string, string> = HEADERS): Route => ({ body, headers });
/**
 * /guarded is served without a CSP, as its fixture server does: under this site's CSP the browser
 * itself would refuse most of its requests before the address guard saw them (and log each
 * refusal as a console error, which is what a CSP does).
 */
const { "content-security-policy": _csp, ...NO_CSP } = HEADERS;
const asset = (body: string | Uint8Array<ArrayBuffer>, type: string, delayMs?: number): Route => ({
  body,
  headers: { "content-type": type },
  delayMs,
});

/** Every page links home and to /clean, which makes /clean the most linked page of `/*`. */
const NAV = `<nav><a href="/">Home</a> <a href="/clean">Clean</a></nav>`;
/** Runs `js` two frames after the first paint (a frame was painted, so FCP is behind us). */
const afterPaint = (js: string) =>
  `requestAnimationFrame(() => requestAnimationFrame(() => { ${js} }));`;
/**
 * A page whose defect comes after the first paint, watched to the end: at parse time it opens a
 * request the server holds (`<prefix>/hold`), two frames after the first paint it runs `js`, and
 * two frames after that it asks for `<prefix>/release`, which answers the held request. The audit
 * waits while a request is in flight (up to its settle limit, 5 s after load for lab pages), so
 * it measures after the defect happened however slow the machine, instead of racing it.
 */
const watched = (prefix: string, js: string) =>
  `<script>fetch("${prefix}/hold");
    ${afterPaint(`${js}; ${afterPaint(`fetch("${prefix}/release");`)}`)}</script>`;

/** Pages that only rendering shows a defect on: path → HTML. */
const DEFECTS: Record<string, string> = {
  "/noindex-removed": PAGES["/noindex-removed"],
  "/noindex-added": page(
    "Noindex added",
    `<h1>Noindex added</h1><p>${prose(60)}</p>${NAV}<script>
      const m = document.createElement("meta"); m.name = "robots"; m.content = "noindex";
      document.head.append(m);</script>`,
  ),
  "/canonical-by-js": page(
    "Canonical by JS",
    `<h1>Canonical</h1><p>${prose(60)}</p>${NAV}` +
      `<script>document.querySelector("link[rel=canonical]").href = "/clean";</script>`,
    `<link rel="canonical" href="/canonical-by-js">`,
  ),
  "/title-by-js": page(
    "Title as served",
    `<h1>Title</h1><p>${prose(60)}</p>${NAV}` +
      `<script>document.title = "Title set by a script";</script>`,
  ),
  "/h1-by-js": page(
    "H1 by JS",
    `<h1 id="h">Heading as served</h1><p>${prose(60)}</p>${NAV}` +
      `<script>document.getElementById("h").textContent = "Heading set by a script";</script>`,
  ),
  "/content-by-js": PAGES["/content-by-js"],
  "/links-by-js": PAGES["/links-by-js"],
  "/console-error": page(
    "Console error",
    `<h1>Widget</h1><p>${prose(60)}</p>${NAV}<script>
      console.error("fixture: the widget failed to load");
      null.widget();</script>`,
  ),
  "/tiny-text": PAGES["/tiny-text"],
  "/tiny-taps": PAGES["/tiny-taps"],
  "/too-wide": PAGES["/too-wide"],
  "/webmcp-ok": PAGES["/webmcp-ok"],
  "/webmcp-bad": PAGES["/webmcp-bad"],
  "/unnamed-controls": PAGES["/unnamed-controls"],
  "/guarded": PAGES["/guarded"],
};

/** The lab sample's defect pages, one per template. */
const LAB_DEFECTS: Record<string, string> = {
  "/lcp/slow": page(
    "Slow hero image",
    `<h1 style="font-size:14px">Photo</h1>${NAV}` +
      `<img src="/lcp/photo.svg" width="360" height="360" alt="A photo">`,
  ),
  "/cls/shift": page(
    "Late slot",
    `<div id="slot"></div><h1>Shift</h1><p>${prose(260)}</p>${NAV}` +
      watched(
        "/cls",
        `const s = document.getElementById("slot");
        s.style.height = "400px"; s.style.background = "#ccc"`,
      ),
  ),
  "/tbt/block": page(
    "Busy main thread",
    `<h1>Blocking</h1><p>${prose(120)}</p>${NAV}` +
      watched("/tbt", `const t = Date.now(); while (Date.now() - t < 1500) {}`),
  ),
  "/heavy/page": page(
    "Heavy page",
    `<h1>Heavy</h1><p>${prose(120)}</p>${NAV}<script>
      for (const n of [1, 2, 3]) fetch("/heavy/data-" + n + ".bin").catch(() => {});</script>`,
  ),
};

/** Pages on which no render check may fire (the home page and /clean are lab pages too). */
const CLEAN = ["/", "/clean", "/other"];

/** The labelled site: routes, and what each render check must name on it. */
export interface RenderLabelledSite extends Labelled {
  routes: (origin: string) => Record<string, Route>;
  /** Every HTML 2xx page the crawl finds: each is rendered. */
  htmlPages: string[];
  /** The pages rendered in lab conditions. */
  labPages: string[];
}

const EXPECT: Record<string, string[]> = {
  noindex_only_in_raw_html: ["/noindex-removed"],
  noindex_only_after_js: ["/noindex-added"],
  canonical_changed_by_js: ["/canonical-by-js"],
  title_changed_by_js: ["/title-by-js", "/content-by-js"],
  h1_changed_by_js: ["/h1-by-js", "/content-by-js"],
  content_requires_js: ["/content-by-js"],
  links_only_after_js: ["/links-by-js"],
  console_errors: ["/console-error"],
  tap_targets_small: ["/tiny-taps"],
  text_too_small: ["/tiny-text"],
  content_wider_than_viewport: ["/too-wide"],
  webmcp_tools: ["/webmcp-ok", "/webmcp-bad"],
  webmcp_tool_invalid: ["/webmcp-bad"],
  agent_accessibility: ["/unnamed-controls"],
  requests_refused: ["/guarded"],
  lcp_slow: ["/lcp/slow"],
  cls_high: ["/cls/shift"],
  tbt_high: ["/tbt/block"],
  transfer_size_large: ["/heavy/page"],
};

/**
 * A held request and the one that releases it (see `watched`); the hold gives up after 6 s so a
 * page that never releases it cannot hang the server.
 */
function gate(): [Route, Route] {
  let open!: () => void;
  const opened = new Promise<void>((r) => open = r);
  const json = () => new Response("{}", { headers: { "content-type": "application/json" } });
  return [
    {
      handler: async () => {
        let t: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([opened, new Promise((r) => t = setTimeout(r, 6_000))]);
        clearTimeout(t);
        return json();
      },
    },
    {
      handler: () => {
        open();
        return json();
      },
    },
  ];
}

function routes(origin: string): Record<string, Route> {
  const port = new URL(origin).port;
  const all = [...Object.keys(DEFECTS), ...Object.keys(LAB_DEFECTS)];
  const home = page(
    "Rendered fixture home",
    `<h1>Home</h1><p>${prose(80)}</p><nav>${
      ["/clean", "/other", ...all].map((p) => `<a href="${p}">${p.slice(1)}</a>`).join(" ")
    }</nav>`,
  );
  const out: Record<string, Route> = {
    "/": doc(home),
    "/clean": doc(PAGES["/clean"]),
    "/other": doc(PAGES["/other"]),
    // The /guarded page's one image that the guard lets through (via rebind.test).
    "/pixel.svg": asset(PAGES["/pixel.svg"], "image/svg+xml"),
    // ~24 KiB: Chromium leaves images under 0.05 bits per pixel (a bare one-colour SVG) out of
    // LCP, as "low-entropy" placeholders.
    "/lcp/photo.svg": asset(
      `<svg xmlns="http://www.w3.org/2000/svg" width="360" height="360">` +
        `<rect width="360" height="360" fill="#4a7"/><!--${"x".repeat(24 * 1024)}--></svg>`,
      "image/svg+xml",
      3_000,
    ),
  };
  for (const prefix of ["/cls", "/tbt"]) {
    [out[`${prefix}/hold`], out[`${prefix}/release`]] = gate();
  }
  for (const n of [1, 2, 3]) {
    out[`/heavy/data-${n}.bin`] = asset(
      new Uint8Array(2 * 1024 * 1024).fill(120),
      "application/octet-stream",
    );
  }
  for (const [p, body] of Object.entries({ ...DEFECTS, ...LAB_DEFECTS })) {
    out[p] = doc(body.replaceAll("PORT", port), p === "/guarded" ? NO_CSP : HEADERS);
  }
  return out;
}

export const RENDER_SITE: RenderLabelledSite = {
  name: "rendered",
  routes,
  expect: EXPECT,
  clean: CLEAN,
  htmlPages: ["/", "/clean", "/other", ...Object.keys(DEFECTS), ...Object.keys(LAB_DEFECTS)],
  labPages: ["/", "/clean", ...Object.keys(LAB_DEFECTS)],
};
