/**
 * The process's rendering service for audits: one lazily started browser pool (nothing is
 * launched until a rendered audit runs), the guarded network policy of the crawler, and the
 * switch that says whether this server renders at all (`RENDERING=off`, Deno Deploy). Audits
 * ask `enabled` when a rendered audit is requested (refused with 503 `rendering_unavailable`
 * before anything is charged) and call `render` from the audit's render step.
 *
 * @module
 */
// Past platform/mod.ts on purpose: it re-exports deps.ts, which names this pool (layers.test.ts).
import type { Config } from "../platform/config.ts";
import type { Resolver } from "../net/mod.ts";
import type { BrowserPool, PoolStats } from "./pool.ts";
import type { PrintOptions } from "./print.ts";
import type { RenderResult } from "./renderer.ts";

/** What an audit step needs from a renderer (tests and benchmarks may pass their own). */
export interface PageRenderer {
  /**
   * Renders one URL (lab: throttled with LCP/CLS/TBT) with this browser User-Agent (the audit's
   * preset, user_agents.ts `browserUserAgent`; default the renderer's own). Throws
   * `RenderFailedError`.
   */
  render(url: string, lab: boolean, userAgent?: string): Promise<RenderResult>;
}

/** Prints waiting behind the one running, per process, past which a print is refused. */
export const MAX_QUEUED_PRINTS = 4;

export class RenderService implements PageRenderer {
  readonly enabled: boolean;
  /**
   * Whether this very process prints PDFs: rendering on and the browser launchable here (a web
   * process whose renders run in workers may still not be able to print itself).
   */
  readonly printing: boolean;
  #printQueue: Promise<unknown> = Promise.resolve();
  #printsWaiting = 0;
  #pool: BrowserPool | null = null;
  #loading: Promise<BrowserPool> | null = null;
  #renderPage: typeof import("./renderer.ts").renderPage | null = null;

  constructor(
    private readonly config: Config,
    private readonly resolver?: Resolver,
    /** Lab render timeout override (benchmarks), ms. */
    private readonly labTimeoutMs?: number,
    /**
     * Whether the processes that run the render jobs can launch the browser, when they are not
     * this one (a web process's workers: true; the all role's worker child: whether it has every
     * permission). Undefined: this process renders, and it is asked.
     */
    renderersCan?: boolean,
  ) {
    this.enabled = config.render.enabled && (renderersCan ?? canLaunchBrowser());
    this.printing = config.render.enabled && canLaunchBrowser();
  }

  /** Whether another print may queue now (one runs at a time; a few may wait). */
  printRoom(): boolean {
    return this.#printsWaiting < MAX_QUEUED_PRINTS;
  }

  /**
   * Prints `html` to PDF in the pool's browser, one print at a time per process (a report is a
   * long page: several at once would hold the pool's pages from the audits' renders).
   */
  print(html: string, o: PrintOptions): Promise<Uint8Array> {
    this.#printsWaiting++;
    const run = this.#printQueue.then(async () => {
      this.#printsWaiting--;
      const [pool, { printPdf }] = await Promise.all([this.pool(), import("./print.ts")]);
      return await printPdf(pool, html, o);
    });
    this.#printQueue = run.catch(() => {});
    return run;
  }

  /**
   * The pool, created on first use. playwright-core and the packaged Chromium are imported only
   * then, so a server that never renders (and Deno Deploy) never loads them.
   */
  pool(): Promise<BrowserPool> {
    this.#loading ??= (async () => {
      const [{ BrowserPool }, { renderPage }] = await Promise.all([
        import("./pool.ts"),
        import("./renderer.ts"),
      ]);
      this.#renderPage = renderPage;
      this.#pool = new BrowserPool({ maxPagesInFlight: this.config.render.pagesInFlight });
      return this.#pool;
    })();
    return this.#loading;
  }

  /** Pool figures (launches, crashes, peak browser memory), or null before the first render. */
  stats(): PoolStats | null {
    return this.#pool?.stats ?? null;
  }

  async render(url: string, lab: boolean, userAgent?: string): Promise<RenderResult> {
    const pool = await this.pool();
    return await this.#renderPage!(url, {
      pool,
      network: { allowPrivate: this.config.allowPrivateTargets, resolver: this.resolver },
      lab,
      userAgent,
      ...(lab && this.labTimeoutMs ? { timeoutMs: this.labTimeoutMs } : {}),
    });
  }

  async close(): Promise<void> {
    if (this.#loading) await (await this.#loading).close();
  }
}

/**
 * Whether this process may launch the browser at all: playwright-core spawns Chromium (which needs
 * `--allow-run`) and at launch reads `/proc/sys/fs/binfmt_misc`, which Deno lets only a process
 * with every permission read. `deno task start` runs without them; `deno task start:render` and the
 * tests run with `--allow-all`. Without them a rendered audit is refused up front (503
 * `rendering_unavailable`, nothing charged) instead of failing after it was accepted.
 */
function canLaunchBrowser(): boolean {
  if (Deno.permissions.querySync({ name: "run" }).state !== "granted") return false;
  try {
    Deno.statSync("/proc/sys/fs/binfmt_misc/WSLInterop");
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
      return false;
    }
  }
  return true;
}
