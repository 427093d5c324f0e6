/**
 * Prints a page the service itself made (an audit report) to PDF in the pool's Chromium. The page
 * is set as content, never navigated to: no URL, no request leaves the browser (every request is
 * aborted; the report loads nothing anyway), and script is off. Chromium's print header and
 * footer carry what must be on every page (the sandbox watermark, the page number), since the
 * report's own banner is only on the first.
 *
 * @module
 */
import type { BrowserPool } from "./pool.ts";

export interface PrintOptions {
  /** The header template (Chromium's print template: inline styles, its own classes). */
  headerTemplate: string;
  /** The footer template (`pageNumber`, `totalPages`). */
  footerTemplate: string;
  /** Whole print, from the browser being up (its launch is the pool's, pool.ts `run`). */
  timeoutMs: number;
}

/** A4 with room for the header and footer; the page's own print styles do the rest. */
const MARGIN = { top: "16mm", bottom: "16mm", left: "12mm", right: "12mm" };

/** `html` printed to PDF bytes (throws `RenderFailedError` on timeout or crash). */
export function printPdf(pool: BrowserPool, html: string, o: PrintOptions): Promise<Uint8Array> {
  return pool.run(async (page) => {
    await page.route("**/*", (route) => route.abort());
    await page.setContent(html, { waitUntil: "load" });
    await page.emulateMedia({ media: "print" });
    const pdf = await page.pdf({
      format: "A4",
      printBackground: true,
      displayHeaderFooter: true,
      headerTemplate: o.headerTemplate,
      footerTemplate: o.footerTemplate,
      margin: MARGIN,
    });
    return new Uint8Array(pdf);
  }, {
    context: {
      viewport: { width: 1024, height: 1400 },
      javaScriptEnabled: false,
      serviceWorkers: "block",
      acceptDownloads: false,
    },
    timeoutMs: o.timeoutMs,
  });
}
