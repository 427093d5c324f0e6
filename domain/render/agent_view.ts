/**
 * What a browsing agent sees of a rendered page, beside Lighthouse 13.3's Agentic Browsing
 * category: the WebMCP tools the page registers, and the accessibility audits an agent relies
 * on to find and operate controls (names, roles, tree integrity, visibility). Layout shift is
 * the lab sample's CLS (`cls_high`), already measured.
 *
 * WebMCP: the packaged Chromium (@sparticuz/chromium 153.0.8010.0, headless) exposes no
 * `navigator.modelContext` / `document.modelContext`, with or without `--enable-features=WebMCP`
 * (the origin-trial flag of Chrome 149+; checked by hand in November 2026). So `WEBMCP_SHIM`, run
 * before any page script, defines a recording `modelContext` on both `navigator` and `document`
 * (the W3C community draft's two places) whose `registerTool` / `provideContext` /
 * `unregisterTool` / `clearContext` record what the page declares; where a real one exists it
 * wraps it, so the page keeps working and the calls are still seen. Nothing is ever executed:
 * a tool's `execute` is only noted as present.
 *
 * Accessibility: axe-core (already a dependency) run through the DevTools protocol (not subject
 * to the page's CSP), limited to the rules about names, roles, tree integrity and hidden
 * focusable content.
 *
 * @module
 */
import type { Page } from "playwright-core";

/** One tool a page registered, as recorded (schema kept as JSON text, clipped). */
export interface WebMcpTool {
  name: string | null;
  description: string | null;
  /** `inputSchema` as JSON, or null when absent or not serialisable. */
  inputSchema: string | null;
  hasExecute: boolean;
  /** `registerTool` or `provideContext`. */
  via: string;
}

/** The WebMCP registrations of a page. */
export interface WebMcpFacts {
  /** The browser had its own modelContext (else the shim stood in). */
  native: boolean;
  /** Tools registered and not unregistered (at most MAX_TOOLS). */
  tools: WebMcpTool[];
}

export const MAX_TOOLS = 50;

/** Runs before page scripts (renderer's init script): records WebMCP registrations. */
export const WEBMCP_SHIM = `(() => {
  if (window.top !== window || window.__serpwrightWebMcp) return;
  const rec = { native: false, tools: new Map() };
  Object.defineProperty(window, "__serpwrightWebMcp", { value: rec, enumerable: false });
  const clip = (v, n) => (typeof v === "string" ? v.slice(0, n) : null);
  const note = (tool, via) => {
    if (!tool || typeof tool !== "object" || rec.tools.size >= ${MAX_TOOLS}) return;
    let schema = null;
    try { schema = tool.inputSchema === undefined ? null : JSON.stringify(tool.inputSchema).slice(0, 4000); } catch (_) { schema = "__unserialisable__"; }
    const name = clip(tool.name, 200);
    rec.tools.set(name === null ? "#" + rec.tools.size : name, {
      name, description: clip(tool.description, 500), inputSchema: schema,
      hasExecute: typeof tool.execute === "function", via,
    });
  };
  const install = (host) => {
    let real = null;
    try { real = host.modelContext || null; } catch (_) { real = null; }
    if (real) rec.native = true;
    const mc = {
      registerTool(tool) { note(tool, "registerTool"); return real && real.registerTool ? real.registerTool(tool) : undefined; },
      unregisterTool(name) { rec.tools.delete(name); return real && real.unregisterTool ? real.unregisterTool(name) : undefined; },
      provideContext(ctx) {
        rec.tools.clear();
        if (ctx && Array.isArray(ctx.tools)) for (const t of ctx.tools) note(t, "provideContext");
        return real && real.provideContext ? real.provideContext(ctx) : undefined;
      },
      clearContext() { rec.tools.clear(); return real && real.clearContext ? real.clearContext() : undefined; },
    };
    try { Object.defineProperty(host, "modelContext", { value: mc, configurable: true }); } catch (_) { /* frozen host */ }
  };
  install(navigator);
  install(document);
})();`;

/** Reads the registrations after the page settled. */
export const WEBMCP_COLLECT = `(() => {
  const rec = window.__serpwrightWebMcp;
  return rec ? { native: rec.native, tools: Array.from(rec.tools.values()) } : { native: false, tools: [] };
})()`;

/** The problems of one tool against the WebMCP draft's tool shape (empty: valid). */
export function webMcpToolProblems(t: WebMcpTool): string[] {
  const p: string[] = [];
  if (!t.name) p.push("no name");
  else if (!/^[A-Za-z0-9_.-]{1,128}$/.test(t.name)) {
    p.push("name is not 1-128 of A-Z a-z 0-9 _ . -");
  }
  if (!t.description || t.description.trim() === "") p.push("no description");
  if (!t.hasExecute) p.push("no execute function");
  if (t.inputSchema !== null) {
    if (t.inputSchema === "__unserialisable__") p.push("inputSchema is not JSON");
    else {
      let s: unknown;
      try {
        s = JSON.parse(t.inputSchema);
      } catch {
        s = null;
      }
      const o = s as Record<string, unknown> | null;
      if (typeof o !== "object" || o === null || Array.isArray(o) || o.type !== "object") {
        p.push('inputSchema is not a JSON Schema of type "object"');
      } else if (
        o.properties !== undefined && (typeof o.properties !== "object" || !o.properties)
      ) {
        p.push("inputSchema.properties is not an object");
      } else if (o.required !== undefined && !Array.isArray(o.required)) {
        p.push("inputSchema.required is not an array");
      }
    }
  }
  return p;
}

/** One accessibility violation an agent trips over. */
export interface AgentA11yViolation {
  rule: string;
  impact: string | null;
  /** Elements affected (true count) and the first few as CSS selectors. */
  count: number;
  targets: string[];
}

/**
 * The axe rules behind Lighthouse's agent-relevant accessibility: accessible names of
 * controls, valid roles and ARIA, a consistent tree, nothing focusable that is hidden.
 */
export const AGENT_A11Y_RULES = [
  "button-name",
  "link-name",
  "input-button-name",
  "label",
  "select-name",
  "aria-command-name",
  "aria-input-field-name",
  "aria-roles",
  "aria-allowed-role",
  "aria-valid-attr",
  "aria-valid-attr-value",
  "aria-required-attr",
  "aria-required-children",
  "aria-required-parent",
  "aria-hidden-focus",
  "aria-hidden-body",
  "nested-interactive",
] as const;

/** Runs the agent-relevant axe rules on the settled page. */
export async function agentA11y(page: Page): Promise<AgentA11yViolation[]> {
  const axe = (await import("axe-core")).default;
  await page.evaluate(axe.source);
  const result = await page.evaluate(`axe.run(document, {
    runOnly: { type: "rule", values: ${JSON.stringify(AGENT_A11Y_RULES)} },
    resultTypes: ["violations"],
  })`) as { violations: { id: string; impact?: string | null; nodes: { target: unknown[] }[] }[] };
  return result.violations.map((v) => ({
    rule: v.id,
    impact: v.impact ?? null,
    count: v.nodes.length,
    targets: v.nodes.slice(0, 5).map((n) => String(n.target.join(" ")).slice(0, 120)),
  }));
}
