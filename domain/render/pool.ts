/**
 * A pool of one headless Chromium at a time, shared by every render of this process, with hard
 * caps: at most `maxPagesInFlight` pages open at once (others wait their turn), each page in its
 * own browser context (no cookies or storage shared between renders), a deadline per page, and a
 * bound on the browser's memory: it is recycled after `maxPagesPerBrowser` pages or as soon as
 * its processes pass `maxBrowserBytes` (read from /proc after each page). A browser that crashes
 * or disconnects is forgotten and its processes killed; the next page launches a fresh one. A
 * context that will not close within `closeTimeoutMs` (a hung renderer) gets the browser killed.
 *
 * One browser, not several: on the small machines this runs on, Chromium's own per-renderer
 * processes already use the cores, and a second browser would double the fixed cost (~100 MiB).
 *
 * @module
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "./chromium.ts";
import { RenderFailedError } from "./failure.ts";
import { findProcessTree, findRootProcesses, killAll, treeMemoryBytes } from "./processes.ts";

export { RenderFailedError, type RenderFailureKind } from "./failure.ts";

/** Context options the pool passes through to playwright (viewport, mobile, user agent...). */
export type ContextOptions = Parameters<Browser["newContext"]>[0];

export interface PoolOptions {
  /** Pages open at once across the process. Default 2. */
  maxPagesInFlight?: number;
  /** Pages one browser renders before it is replaced (leaks in long-lived browsers). Default 100. */
  maxPagesPerBrowser?: number;
  /** Browser memory (PSS of all its processes) above which it is replaced. Default 1 GiB. */
  maxBrowserBytes?: number;
  /** How long closing a context or the browser may take before processes are killed. Default 5 s. */
  closeTimeoutMs?: number;
  /** Memory is read after the first page and every this many pages. Default 4. */
  memoryCheckEvery?: number;
  /** Starts a browser whose command line carries `marker` (tests inject failures here). */
  launch?: (marker: string) => Promise<Browser>;
}

export interface PoolStats {
  launches: number;
  /** Browsers that went away without the pool closing them. */
  crashes: number;
  /** Browsers replaced for the page or memory cap. */
  recycled: number;
  timeouts: number;
  pagesRendered: number;
  peakInFlight: number;
  /** Highest memory of the browser's processes seen after a page, bytes. */
  peakBrowserBytes: number;
}

interface Slot {
  browser: Browser;
  marker: string;
  pages: number;
  inFlight: number;
  /** No new pages; closed when the last one finishes. */
  retired: boolean;
  /** Disconnected (crash, kill, or our own close). */
  dead: boolean;
  closing: boolean;
  /** The browser's processes as last seen, killed if it dies (orphans would outlive it). */
  pids: number[];
}

const DEFAULTS = {
  maxPagesInFlight: 2,
  maxPagesPerBrowser: 100,
  maxBrowserBytes: 1024 * 1024 * 1024,
  closeTimeoutMs: 5_000,
  memoryCheckEvery: 4,
};

async function defaultLaunch(marker: string): Promise<Browser> {
  return (await launchChromium({ marker, timeout: 30_000 })).browser;
}

export class BrowserPool {
  readonly stats: PoolStats = {
    launches: 0,
    crashes: 0,
    recycled: 0,
    timeouts: 0,
    pagesRendered: 0,
    peakInFlight: 0,
    peakBrowserBytes: 0,
  };
  readonly #opts: Required<Omit<PoolOptions, "launch">>;
  readonly #launch: (marker: string) => Promise<Browser>;
  #slot: Slot | null = null;
  #launching: Promise<Slot> | null = null;
  #inFlight = 0;
  #waiters: (() => void)[] = [];
  #closed = false;
  #closing = new Set<Promise<void>>();

  constructor(opts: PoolOptions = {}) {
    this.#opts = {
      maxPagesInFlight: Math.max(1, opts.maxPagesInFlight ?? DEFAULTS.maxPagesInFlight),
      maxPagesPerBrowser: Math.max(1, opts.maxPagesPerBrowser ?? DEFAULTS.maxPagesPerBrowser),
      maxBrowserBytes: opts.maxBrowserBytes ?? DEFAULTS.maxBrowserBytes,
      closeTimeoutMs: opts.closeTimeoutMs ?? DEFAULTS.closeTimeoutMs,
      memoryCheckEvery: Math.max(1, opts.memoryCheckEvery ?? DEFAULTS.memoryCheckEvery),
    };
    this.#launch = opts.launch ?? defaultLaunch;
  }

  /**
   * Runs `task` on a fresh page in a fresh context, within `timeoutMs` counted from the moment a
   * browser is up: a launch is the pool's (bounded by its own 30 s), and a cold start on a busy
   * machine is no fault of the page, which would otherwise be reported as timed out. The
   * context is closed afterwards whatever happened. Throws `RenderFailedError` on timeout, crash
   * or when no browser can be launched; errors of the task itself pass through.
   */
  async run<T>(
    task: (page: Page, context: BrowserContext) => Promise<T>,
    o: { context?: ContextOptions; timeoutMs: number },
  ): Promise<T> {
    if (this.#closed) throw new RenderFailedError("closed", "The browser pool is closed");
    await this.#acquire();
    let slot: Slot | null = null;
    let context: BrowserContext | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let timedOut = false;
    try {
      slot = await this.#currentSlot();
      slot.inFlight++;
      const s = slot;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          this.stats.timeouts++;
          reject(new RenderFailedError("timeout", `Render exceeded ${o.timeoutMs} ms`));
        }, o.timeoutMs);
      });
      const work = (async () => {
        const ctx = await s.browser.newContext(o.context);
        if (timedOut) {
          await withDeadline(ctx.close(), this.#opts.closeTimeoutMs); // too late: nobody closes it
          throw new RenderFailedError("timeout", "Timed out before the page opened");
        }
        context = ctx;
        const page = await context.newPage();
        return await task(page, context);
      })();
      work.catch(() => {}); // after a timeout its rejection has nobody to go to
      return await Promise.race([work, deadline]);
    } catch (e) {
      const s = slot as Slot | null;
      if (s?.dead && !(e instanceof RenderFailedError && e.kind === "timeout")) {
        throw new RenderFailedError("crashed", `The browser went away mid-render: ${message(e)}`);
      }
      throw e;
    } finally {
      clearTimeout(timer);
      const s = slot as Slot | null;
      const ctx = context as BrowserContext | null;
      if (s) {
        if (ctx && !s.dead) {
          const closed = await withDeadline(ctx.close(), this.#opts.closeTimeoutMs);
          if (!closed) this.#kill(s); // a renderer that will not let go
        }
        s.inFlight--;
        s.pages++;
        this.stats.pagesRendered++;
        this.#afterPage(s);
      }
      this.#release();
    }
  }

  /** Pids of the current browser's processes (empty when none runs). */
  browserPids(): number[] {
    return this.#slot ? findProcessTree(this.#slot.marker) : [];
  }

  /** The current browser's own process (not its renderers), or null when none runs. */
  browserMainPid(): number | null {
    return this.#slot ? (findRootProcesses(this.#slot.marker)[0] ?? null) : null;
  }

  /** Memory (PSS) of the current browser's processes, bytes. */
  browserBytes(): number {
    return treeMemoryBytes(this.browserPids());
  }

  /** Pages in flight right now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Closes the browser; later `run` calls fail with `closed`. */
  async close(): Promise<void> {
    this.#closed = true;
    const launching = this.#launching;
    if (launching) await launching.catch(() => {});
    if (this.#slot) this.#retire(this.#slot, false);
    await Promise.all([...this.#closing]);
  }

  async #acquire(): Promise<void> {
    if (this.#inFlight < this.#opts.maxPagesInFlight) this.#inFlight++;
    else await new Promise<void>((resolve) => this.#waiters.push(resolve)); // slot handed over
    this.stats.peakInFlight = Math.max(this.stats.peakInFlight, this.#inFlight);
  }

  #release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#inFlight--;
  }

  #currentSlot(): Promise<Slot> {
    const s = this.#slot;
    if (s && !s.dead && !s.retired) return Promise.resolve(s);
    if (this.#closed) return Promise.reject(new RenderFailedError("closed", "Pool closed"));
    if (!this.#launching) {
      this.#launching = this.#startBrowser().finally(() => {
        this.#launching = null;
      });
    }
    return this.#launching;
  }

  async #startBrowser(): Promise<Slot> {
    const marker = crypto.randomUUID();
    let browser: Browser;
    try {
      browser = await this.#launch(marker);
    } catch (e) {
      killAll(findProcessTree(marker));
      throw new RenderFailedError("unavailable", `Chromium could not start: ${message(e)}`);
    }
    this.stats.launches++;
    const slot: Slot = {
      browser,
      marker,
      pages: 0,
      inFlight: 0,
      retired: false,
      dead: false,
      closing: false,
      pids: findProcessTree(marker),
    };
    browser.on("disconnected", () => {
      slot.dead = true;
      if (!slot.closing) this.stats.crashes++;
      if (this.#slot === slot) this.#slot = null;
      killAll(slot.pids); // renderers the dead browser left behind
    });
    this.#slot = slot;
    return slot;
  }

  /** After each page: record memory, replace the browser when a cap is reached. */
  #afterPage(slot: Slot): void {
    if (slot.dead) return;
    if (slot.retired) {
      if (slot.inFlight === 0) this.#shutDown(slot);
      return;
    }
    slot.pids = findProcessTree(slot.marker);
    // PSS costs ~50 ms to read (the kernel walks every mapping): every few pages, not each.
    let bytes = 0;
    if (slot.pages % this.#opts.memoryCheckEvery === 0 || slot.pages === 1) {
      bytes = treeMemoryBytes(slot.pids);
      this.stats.peakBrowserBytes = Math.max(this.stats.peakBrowserBytes, bytes);
    }
    if (slot.pages >= this.#opts.maxPagesPerBrowser || bytes > this.#opts.maxBrowserBytes) {
      this.#retire(slot, true);
    }
  }

  #retire(slot: Slot, recycled: boolean): void {
    if (slot.retired) return;
    slot.retired = true;
    if (recycled) this.stats.recycled++;
    if (this.#slot === slot) this.#slot = null;
    if (slot.inFlight === 0) this.#shutDown(slot);
  }

  #shutDown(slot: Slot): void {
    if (slot.closing || slot.dead) return;
    slot.closing = true;
    const pids = findProcessTree(slot.marker);
    const p = withDeadline(slot.browser.close(), this.#opts.closeTimeoutMs).then((ok) => {
      if (!ok) killAll(pids);
    });
    this.#closing.add(p);
    p.finally(() => this.#closing.delete(p));
  }

  #kill(slot: Slot): void {
    slot.closing = true;
    slot.dead = true;
    if (this.#slot === slot) this.#slot = null;
    killAll(findProcessTree(slot.marker));
  }
}

/** True when `p` settled within `ms`; its rejection is swallowed either way. */
async function withDeadline(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), ms));
  try {
    return await Promise.race([p.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function message(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split("\n")[0].slice(0, 200);
}
