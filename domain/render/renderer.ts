/**
 * Renders one URL in the pool's Chromium as a phone does and returns what an audit compares:
 * the facts of the raw HTML (the document response as fetched, before any script ran) and of
 * the rendered DOM, both through the crawler's own extractor (`extractPageFacts`) so a
 * difference is a real difference and not two parsers disagreeing; the mobile facts of the
 * laid-out page; and, for lab pages, LCP, CLS, TBT, transfer and request count under Lighthouse's
 * mobile throttling (see `throttling.ts`).
 *
 * Device: Lighthouse's default mobile screen (Moto G Power: 412 × 823 CSS px, DPR 1.75, touch,
 * mobile viewport rules), with a mobile Chrome user agent carrying our bot token, or the audit's
 * preset's browser User-Agent (`userAgent`; user_agents.ts `browserUserAgent`) on the same screen.
 *
 * @module
 */
import type { Page } from "playwright-core";
// Past audit_engine/mod.ts on purpose: audit_engine ↔ render, a known circle (layers.test.ts).
import { type PageFacts, siteKeyOf } from "../audit_engine/page_facts.ts";
import { extractPageFacts } from "../audit_engine/facts/extract.ts";
import { browserUserAgent } from "../audit_engine/user_agents.ts";
import { type BlockedRequest, guardNetwork, type NetworkPolicy } from "./guarded_network.ts";
import type { BrowserPool, ContextOptions } from "./pool.ts";
import { collectScript, INIT_SCRIPT, type ProbeLimits, type ProbeResult } from "./probe.ts";
import {
  agentA11y,
  type AgentA11yViolation,
  WEBMCP_COLLECT,
  WEBMCP_SHIM,
  type WebMcpFacts,
} from "./agent_view.ts";
import {
  MOBILE_SLOW_4G,
  NO_THROTTLING,
  SimulatedLink,
  type ThrottleProfile,
} from "./throttling.ts";

/** Lighthouse's mobile screen and a mobile Chrome UA with our token (sites may vary by UA). */
export const MOBILE_DEVICE: ContextOptions = {
  viewport: { width: 412, height: 823 },
  screen: { width: 412, height: 823 },
  deviceScaleFactor: 1.75,
  isMobile: true,
  hasTouch: true,
  userAgent: browserUserAgent("serpwright"),
  locale: "en-US",
  serviceWorkers: "block",
  acceptDownloads: false,
};

export const PROBE_LIMITS: ProbeLimits = { tapTargetMinPx: 48, fontMinPx: 12, maxNodes: 5000 };

export interface RenderOptions {
  pool: BrowserPool;
  network: NetworkPolicy;
  /** Lab page: throttled, with LCP/CLS/TBT. Otherwise unthrottled, DOM and mobile facts only. */
  lab: boolean;
  /**
   * Whole render, from the browser being up (its launch is the pool's, pool.ts `run`). Default
   * 45 s for lab pages, 20 s otherwise.
   */
  timeoutMs?: number;
  /** After `load`: wait for this long without network activity... Default 1 s lab, 300 ms. */
  quietMs?: number;
  /** ...but no longer than this. Default 5 s lab, 2 s otherwise. */
  settleMaxMs?: number;
  /** Overrides the lab profile (tests). */
  throttle?: ThrottleProfile;
  /**
   * The browser's User-Agent (the audit's preset, `browserUserAgent`); default MOBILE_DEVICE's.
   * Only the string changes: the screen stays the mobile one whatever the preset.
   */
  userAgent?: string;
}

export interface LabMetrics {
  profile: ThrottleProfile["id"];
  fcpMs: number | null;
  lcpMs: number | null;
  lcpElement: string | null;
  lcpUrl: string | null;
  cls: number;
  clsSources: string[];
  tbtMs: number;
  longTasks: number;
  domContentLoadedMs: number | null;
  loadMs: number | null;
  transferBytes: number;
  requests: number;
}

export interface MobileFacts {
  viewportWidth: number;
  scrollWidth: number;
  widestElement: string | null;
  tapTargets: ProbeResult["tapTargets"];
  text: ProbeResult["text"];
}

export interface RenderResult {
  /** The URL asked for, and where the page ended after navigation redirects. */
  url: string;
  finalUrl: string;
  status: number;
  /** Facts of the document as fetched (null when there was no document response). */
  raw: PageFacts | null;
  rawHeaders: Headers | null;
  rendered: PageFacts;
  lab: LabMetrics | null;
  mobile: MobileFacts;
  /** Console errors and uncaught exceptions (at most 20, clipped). */
  consoleErrors: string[];
  consoleErrorCount: number;
  blocked: BlockedRequest[];
  blockedCount: number;
  failedRequests: number;
  durationMs: number;
  /** WebMCP tools the page registered (agent_view.ts); absent on results from before it. */
  webmcp?: WebMcpFacts;
  /** Agent-relevant accessibility violations (axe), or null when axe could not run. */
  agentA11y?: AgentA11yViolation[] | null;
}

const MAX_NAV_REDIRECTS = 5;
/** The rendered document as HTML, doctype included (the extractor reads it). */
const SERIALIZE = `(document.doctype ? "<!DOCTYPE " + document.doctype.name + ">" : "") +
  (document.documentElement ? document.documentElement.outerHTML : "")`;
const KEEP_ERRORS = 20;

/** Renders `url`. Throws `RenderFailedError` (pool) or playwright's navigation error. */
export async function renderPage(url: string, o: RenderOptions): Promise<RenderResult> {
  const profile = o.lab ? (o.throttle ?? MOBILE_SLOW_4G) : NO_THROTTLING;
  const timeoutMs = o.timeoutMs ?? (o.lab ? 45_000 : 20_000);
  const t0 = performance.now();
  return await o.pool.run(async (page, context) => {
    const log = await guardNetwork(context, o.network, new SimulatedLink(profile));
    await context.addInitScript(INIT_SCRIPT);
    await context.addInitScript(WEBMCP_SHIM);
    context.on("page", (p) => {
      if (p !== page) p.close().catch(() => {}); // popups are not part of the page
    });
    page.on("dialog", (d) => d.dismiss().catch(() => {}));
    const errors: string[] = [];
    let errorCount = 0;
    const error = (text: string) => {
      errorCount++;
      if (errors.length < KEEP_ERRORS) errors.push(text.slice(0, 300));
    };
    page.on("console", (m) => {
      // Our own refusals surface as ERR_BLOCKED_BY_CLIENT; they are reported as blocked instead.
      if (m.type() === "error" && !m.text().includes("ERR_BLOCKED_BY_CLIENT")) error(m.text());
    });
    page.on("pageerror", (e) => error(`Uncaught ${e.name}: ${e.message}`));
    if (profile.cpuSlowdown > 1) {
      const cdp = await context.newCDPSession(page);
      await cdp.send("Emulation.setCPUThrottlingRate", { rate: profile.cpuSlowdown });
    }

    let target = url;
    let status = 0;
    for (let hop = 0;; hop++) {
      log.navigationRedirect = null;
      try {
        const res = await page.goto(target, { waitUntil: "load", timeout: timeoutMs });
        status = res?.status() ?? 0;
      } catch (e) {
        if (log.navigationRedirect === null) throw e;
      }
      if (log.navigationRedirect === null) break;
      if (hop >= MAX_NAV_REDIRECTS) throw new Error(`More than ${MAX_NAV_REDIRECTS} redirects`);
      target = log.navigationRedirect;
    }
    await settle(
      page,
      log,
      o.quietMs ?? (o.lab ? 1000 : 300),
      o.settleMaxMs ?? (o.lab ? 5000 : 2000),
    );
    const probe = await page.evaluate(collectScript(PROBE_LIMITS)) as ProbeResult;
    const finalUrl = new URL(page.url());
    const siteKey = siteKeyOf(new URL(url));
    // Serialised in the page's own world: `page.content()` first injects playwright's utility
    // script into the page, which cost ~0.4 s per page (measured).
    const html = await page.evaluate(SERIALIZE) as string;
    const webmcp = await page.evaluate(WEBMCP_COLLECT) as WebMcpFacts;
    // After the DOM was serialised: axe's own script must not be part of what is compared.
    const a11y = await agentA11y(page).catch(() => null);
    const rendered = extractPageFacts(html, finalUrl, siteKey);
    const doc = log.document;
    const raw = doc ? extractPageFacts(doc.body, new URL(doc.url), siteKey) : null;
    return {
      url,
      finalUrl: finalUrl.href,
      status: doc?.status ?? status,
      raw,
      rawHeaders: doc?.headers ?? null,
      rendered,
      lab: o.lab
        ? {
          profile: profile.id,
          fcpMs: round(probe.fcpMs),
          lcpMs: round(probe.lcpMs),
          lcpElement: probe.lcpElement,
          lcpUrl: probe.lcpUrl,
          cls: Math.round(probe.cls * 10000) / 10000,
          clsSources: probe.clsSources,
          tbtMs: Math.round(probe.tbtMs),
          longTasks: probe.longTasks,
          domContentLoadedMs: round(probe.domContentLoadedMs),
          loadMs: round(probe.loadMs),
          transferBytes: log.transferBytes,
          requests: log.requests,
        }
        : null,
      mobile: {
        viewportWidth: probe.viewportWidth,
        scrollWidth: probe.scrollWidth,
        widestElement: probe.widestElement,
        tapTargets: probe.tapTargets,
        text: probe.text,
      },
      consoleErrors: errors,
      consoleErrorCount: errorCount,
      blocked: log.blocked,
      blockedCount: log.blockedCount,
      failedRequests: log.failedCount,
      durationMs: Math.round(performance.now() - t0),
      webmcp,
      agentA11y: a11y,
    };
  }, {
    context: { ...MOBILE_DEVICE, userAgent: o.userAgent ?? MOBILE_DEVICE!.userAgent },
    timeoutMs,
  });
}

/**
 * Waits until the network has been quiet for `quietMs` (nothing in flight) or `maxMs` passed,
 * then for one more frame, so late responses and their paints are in the measurements.
 */
async function settle(
  page: Page,
  log: { inFlight: number; lastActivity: number },
  quietMs: number,
  maxMs: number,
): Promise<void> {
  const start = performance.now();
  while (performance.now() - start < maxMs) {
    if (log.inFlight === 0 && performance.now() - log.lastActivity >= quietMs) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await page.evaluate("new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))");
}

function round(n: number | null): number | null {
  return n === null ? null : Math.round(n);
}
