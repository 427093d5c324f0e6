/**
 * Which pages of a crawled site a rendered audit renders. Rendering costs ~50x a raw fetch, so
 * only a sample is rendered:
 *
 * - the lab sample (throttled, with LCP/CLS/TBT): the home page, then one page per template, the
 *   templates taken in order of the inlinks their pages receive, each represented by its most
 *   linked page; at most `labCap` pages;
 * - the DOM sample (unthrottled, raw-vs-rendered comparison and mobile layout): the lab sample
 *   plus the most linked remaining pages, up to `renderCap` pages in all.
 *
 * A "template" is the URL path shape: the first path segment and the number of segments
 * (`/blog/a` and `/blog/b` share `/blog/*`; `/about` and `/contact` share `/*`). Sites that
 * route everything through one shape collapse to one template, which is what they are.
 *
 * @module
 */

export interface SampleCandidate {
  url: string;
  inlinks: number;
}

export interface RenderSample {
  /** Lab pages, home first. */
  lab: string[];
  /** Every page to render (lab pages included), lab pages first. */
  all: string[];
}

/** Default caps: a rendered audit renders up to 50 pages, 10 of them in lab conditions. */
export const RENDER_CAPS = { labCap: 10, renderCap: 50 } as const;

/** The path shape a page shares with its template siblings. */
export function templateKey(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return url;
  }
  const segs = path.split("/").filter((s) => s !== "");
  if (segs.length === 0) return "/";
  if (segs.length === 1) return "/*";
  return `/${segs[0]}` + "/*".repeat(segs.length - 1);
}

/**
 * Picks the sample; deterministic (ties broken by URL). `labTaken`: templates a lab page already
 * stands for (an earlier round of a rendered audit), which get no other lab page.
 */
export function pickRenderSample(
  home: string | null,
  candidates: SampleCandidate[],
  caps: { labCap: number; renderCap: number } = RENDER_CAPS,
  labTaken: (template: string) => boolean = () => false,
): RenderSample {
  const byLinks = [...candidates].sort((a, b) =>
    b.inlinks - a.inlinks || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0)
  );
  const templates = new Map<string, { total: number; best: SampleCandidate }>();
  for (const c of byLinks) {
    if (c.url === home) continue;
    const key = templateKey(c.url);
    const t = templates.get(key);
    if (t) t.total += c.inlinks;
    else templates.set(key, { total: c.inlinks, best: c }); // first seen = most linked
  }
  const ranked = [...templates.values()].sort((a, b) =>
    b.total - a.total || (a.best.url < b.best.url ? -1 : 1)
  );
  const lab: string[] = [];
  if (home !== null && caps.labCap > 0) lab.push(home);
  for (const t of ranked) {
    if (lab.length >= Math.min(caps.labCap, caps.renderCap)) break;
    if (!labTaken(templateKey(t.best.url))) lab.push(t.best.url);
  }
  const all = [...lab];
  const taken = new Set(all);
  for (const c of byLinks) {
    if (all.length >= caps.renderCap) break;
    if (!taken.has(c.url)) {
      taken.add(c.url);
      all.push(c.url);
    }
  }
  return { lab, all };
}
