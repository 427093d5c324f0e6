/**
 * The public pages outside `/v1`: home, pricing, the agent quickstart, the error and check references and
 * llms.txt. Plain Hono GETs, not part of the OpenAPI document. Each page is built once per app
 * (its inputs are constants and the configured public base URL) and served from memory.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv, Services } from "./env.ts";
import { agentsPage } from "./pages/agents_doc.ts";
import { checksPage } from "./pages/checks_doc.ts";
import { errorsPage } from "./pages/errors_doc.ts";
import { homePage } from "./pages/home.ts";
import { llmsTxt } from "./pages/llms_txt.ts";
import { htmlToMarkdown, wantsMarkdown } from "./pages/markdown.ts";
import { pricingPage } from "./pages/pricing.ts";

const HTML = "text/html; charset=utf-8";
const TEXT = "text/plain; charset=utf-8";
const MARKDOWN = "text/markdown; charset=utf-8";

/** Security headers for pages that load nothing from anywhere (inline styles only, no scripts). */
const PAGE_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "strict-origin-when-cross-origin",
  "Cache-Control": "public, max-age=300",
};

export function pageRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const base = s.deps.config.publicBaseUrl;
  const pages: [path: string, type: string, body: string][] = [
    ["/", HTML, homePage(base)],
    ["/pricing", HTML, pricingPage(base)],
    ["/docs/agents", HTML, agentsPage(base)],
    ["/docs/errors", HTML, errorsPage(base)],
    ["/docs/checks", HTML, checksPage(base)],
    ["/llms.txt", TEXT, llmsTxt(base)],
  ];
  for (const [path, type, body] of pages) {
    if (type !== HTML) {
      app.get(path, (c) => c.body(body, 200, { ...PAGE_HEADERS, "Content-Type": type }));
      continue;
    }
    // `Accept: text/markdown` answers the page's content as Markdown (issue 33), for agents.
    const markdown = htmlToMarkdown(body);
    app.get(
      path,
      (c) =>
        wantsMarkdown(c.req.header("accept"))
          ? c.body(markdown, 200, { ...PAGE_HEADERS, "Content-Type": MARKDOWN, Vary: "Accept" })
          : c.body(body, 200, { ...PAGE_HEADERS, "Content-Type": type, Vary: "Accept" }),
    );
  }
}
