/**
 * The scripts the renderer runs inside the page. Kept as strings (not functions) so the DOM
 * names are not type-checked against Deno's libraries and nothing of the service's code leaks
 * into a page. Both are plain ES2020.
 *
 * `INIT_SCRIPT` runs before any of the page's own scripts, in every document: it registers
 * PerformanceObservers (with `buffered: true`, so entries from before registration count too)
 * for first-contentful-paint, largest-contentful-paint, layout-shift and longtask.
 *
 * `collectScript()` runs once the page has settled and returns `ProbeResult`: the lab metrics
 * from those entries, and the mobile facts measured on the laid-out page.
 *
 * @module
 */

/** Thresholds of the mobile measurements. */
export interface ProbeLimits {
  /** Minimum tap target side, CSS px (Lighthouse: 48). */
  tapTargetMinPx: number;
  /** Text smaller than this is "too small", CSS px (Lighthouse: 12). */
  fontMinPx: number;
  /** Elements and text nodes examined at most, so a huge DOM cannot stall the probe. */
  maxNodes: number;
}

export interface ProbeResult {
  fcpMs: number | null;
  lcpMs: number | null;
  lcpElement: string | null;
  lcpUrl: string | null;
  /** Largest session window of layout shifts (gap < 1 s, window <= 5 s), as CLS defines it. */
  cls: number;
  /** Elements that shifted most (from the shift entries' first source). */
  clsSources: string[];
  /** Sum over long tasks after FCP of (duration - 50 ms), the part after FCP only. */
  tbtMs: number;
  longTasks: number;
  domContentLoadedMs: number | null;
  loadMs: number | null;
  /** Layout viewport width, CSS px (`documentElement.clientWidth`). */
  viewportWidth: number;
  scrollWidth: number;
  /** The element reaching furthest right beyond the viewport (when content is wider). */
  widestElement: string | null;
  tapTargets: { examined: number; failing: number; examples: string[] };
  text: { chars: number; smallChars: number; examples: string[] };
}

export const INIT_SCRIPT = `(() => {
  if (window.top !== window || window.__serpwrightProbe) return;
  const s = { fcp: null, lcp: null, lcpElement: null, lcpUrl: null, shifts: [], longTasks: [] };
  Object.defineProperty(window, "__serpwrightProbe", { value: s, enumerable: false });
  const describe = (el) => {
    if (!el || !el.tagName) return null;
    let d = el.tagName.toLowerCase();
    if (el.id) d += "#" + el.id;
    else if (el.classList && el.classList.length) d += "." + Array.from(el.classList).slice(0, 2).join(".");
    return d;
  };
  const observe = (type, cb) => {
    try {
      new PerformanceObserver((list) => { for (const e of list.getEntries()) cb(e); })
        .observe({ type, buffered: true });
    } catch (_) { /* entry type not supported */ }
  };
  observe("paint", (e) => { if (e.name === "first-contentful-paint") s.fcp = e.startTime; });
  observe("largest-contentful-paint", (e) => {
    s.lcp = e.startTime; s.lcpElement = describe(e.element); s.lcpUrl = e.url || null;
  });
  // hadRecentInput is not consulted: the renderer never sends input, and Chromium's mobile
  // emulation marks every shift as if it followed one (measured), which would hide them all.
  observe("layout-shift", (e) => {
    const src = e.sources && e.sources[0] ? describe(e.sources[0].node) : null;
    s.shifts.push([e.startTime, e.value, src]);
  });
  observe("longtask", (e) => s.longTasks.push([e.startTime, e.duration]));
})();`;

/** The collection script, with the limits baked in as a JSON literal. */
export function collectScript(limits: ProbeLimits): string {
  return `((o) => {
  const s = window.__serpwrightProbe || { fcp: null, lcp: null, lcpElement: null, lcpUrl: null, shifts: [], longTasks: [] };
  const describe = (el) => {
    if (!el || !el.tagName) return null;
    let d = el.tagName.toLowerCase();
    if (el.id) d += "#" + el.id;
    else if (el.classList && el.classList.length) d += "." + Array.from(el.classList).slice(0, 2).join(".");
    return d;
  };
  let cls = 0, win = 0, winStart = -1, last = -1;
  const bySource = new Map();
  for (const [t, v, src] of s.shifts) {
    if (winStart >= 0 && t - last < 1000 && t - winStart < 5000) win += v;
    else { win = v; winStart = t; }
    last = t;
    if (win > cls) cls = win;
    if (src) bySource.set(src, (bySource.get(src) || 0) + v);
  }
  const clsSources = Array.from(bySource.entries()).sort((a, b) => b[1] - a[1]).slice(0, 5)
    .map(([k, v]) => k + " (" + v.toFixed(3) + ")");
  let tbt = 0;
  if (s.fcp !== null) {
    for (const [start, duration] of s.longTasks) {
      const end = start + duration;
      if (end <= s.fcp) continue;
      const counted = end - Math.max(start, s.fcp);
      if (counted > 50) tbt += counted - 50;
    }
  }
  const nav = performance.getEntriesByType("navigation")[0];
  const root = document.documentElement;
  // The layout viewport (412 with width=device-width): innerWidth grows when a phone zooms out
  // to fit wider content, which would hide exactly what we look for.
  const vw = root ? root.clientWidth : window.innerWidth;
  const scrollWidth = Math.max(root ? root.scrollWidth : 0, document.body ? document.body.scrollWidth : 0);
  let widestElement = null;
  if (scrollWidth > vw && document.body) {
    let right = vw;
    const all = document.body.getElementsByTagName("*");
    for (let i = 0; i < all.length && i < o.maxNodes; i++) {
      const r = all[i].getBoundingClientRect();
      const edge = r.right + window.scrollX;
      if (r.width > 0 && edge > right + 1) { right = edge; widestElement = describe(all[i]) + " (" + Math.round(edge) + "px)"; }
    }
  }
  const visible = (el, st) => st.visibility !== "hidden" && st.display !== "none" &&
    Number(st.opacity) !== 0 && el.getClientRects().length > 0;
  const SEL = "a[href],button,input:not([type=hidden]),select,textarea,[role=button],[role=link]," +
    "[role=checkbox],[role=menuitem],[role=tab],[role=switch],[onclick]";
  const targets = [];
  for (const el of document.querySelectorAll(SEL)) {
    if (targets.length >= o.maxNodes) break;
    const st = getComputedStyle(el);
    if (!visible(el, st)) continue;
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) continue;
    targets.push({ el, l: r.left, t: r.top, r: r.right, b: r.bottom, w: r.width, h: r.height });
  }
  const overlap = (a, b) => Math.max(0, Math.min(a.r, b.r) - Math.max(a.l, b.l)) *
    Math.max(0, Math.min(a.b, b.b) - Math.max(a.t, b.t));
  const tapExamples = [];
  let failing = 0;
  const half = o.tapTargetMinPx / 2;
  for (const t of targets) {
    if (t.w >= o.tapTargetMinPx && t.h >= o.tapTargetMinPx) continue;
    const cx = (t.l + t.r) / 2, cy = (t.t + t.b) / 2;
    const finger = { l: cx - half, r: cx + half, t: cy - half, b: cy + half };
    const own = overlap(finger, t);
    for (const u of targets) {
      if (u === t || u.el.contains(t.el) || t.el.contains(u.el)) continue;
      const other = overlap(finger, u);
      if (other > 0 && other >= 0.25 * own) {
        failing++;
        if (tapExamples.length < 10) {
          tapExamples.push(describe(t.el) + " " + Math.round(t.w) + "x" + Math.round(t.h) +
            "px too close to " + describe(u.el));
        }
        break;
      }
    }
  }
  let chars = 0, smallChars = 0;
  const textExamples = [];
  const seen = new Map();
  if (document.body) {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    let n, count = 0;
    while ((n = walker.nextNode()) && count < o.maxNodes) {
      const text = n.nodeValue.trim();
      if (!text) continue;
      const el = n.parentElement;
      if (!el || /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE)$/.test(el.tagName)) continue;
      count++;
      let info = seen.get(el);
      if (!info) {
        const st = getComputedStyle(el);
        info = { size: parseFloat(st.fontSize), show: visible(el, st) };
        seen.set(el, info);
      }
      if (!info.show) continue;
      const c = text.replace(/\\s+/g, "").length;
      chars += c;
      if (info.size < o.fontMinPx) {
        smallChars += c;
        if (textExamples.length < 5) textExamples.push(info.size + "px: " + text.slice(0, 60));
      }
    }
  }
  return {
    fcpMs: s.fcp, lcpMs: s.lcp, lcpElement: s.lcpElement, lcpUrl: s.lcpUrl,
    cls, clsSources, tbtMs: tbt, longTasks: s.longTasks.length,
    domContentLoadedMs: nav ? nav.domContentLoadedEventEnd : null,
    loadMs: nav && nav.loadEventEnd > 0 ? nav.loadEventEnd : null,
    viewportWidth: vw, scrollWidth, widestElement,
    tapTargets: { examined: targets.length, failing, examples: tapExamples },
    text: { chars, smallChars, examples: textExamples },
  };
})(${JSON.stringify(limits)})`;
}
