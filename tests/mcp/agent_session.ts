/**
 * Issue 33's scripted agent session over `/mcp`, measured as a host would fill a model's context:
 * the tools of `tools/list` (names, descriptions, input and output schemas), then, per call, the
 * text content AND the structuredContent (hosts differ in which they show; count both). Used by
 * `deno task bench agent` (tests/bench/agent_bench.ts) and held by tests/mcp/context_budget.test.ts.
 *
 * The session: tools/list; create a project; start an audit and wait for it; the audit's summary;
 * the first page of the worst issue's items; one page of the inventory; start a re-check of that
 * issue and wait for it; a share link of the report. It reads results in either answer shape
 * (flat, or under one field as before issue 33), so the same script measures both.
 */
import type { Client } from "@modelcontextprotocol/client";
import { countTokens } from "gpt-tokenizer";
import { html, page, serveSite } from "../helpers/sites.ts";
import type { FakeSite } from "../helpers/sites.ts";

/** Issue 33's targets: `tools/list` and the whole session, in bytes. */
export const TOOLS_LIST_BUDGET = 16 * 1024;
export const SESSION_BUDGET = 48 * 1024;

export interface Step {
  step: string;
  bytes: number;
  tokens: number;
  /** Of which the text content (bytes). */
  textBytes: number;
  /** Of which the structuredContent (bytes). */
  structuredBytes: number;
}

export interface ToolSize {
  name: string;
  bytes: number;
  tokens: number;
}

export interface SessionFigures {
  steps: Step[];
  tools: ToolSize[];
  totalBytes: number;
  totalTokens: number;
}

const enc = new TextEncoder();
const size = (text: string) => ({ bytes: enc.encode(text).length, tokens: countTokens(text) });

/** A 34-URL site with defects on every page (no meta description, no viewport on some). */
export function sessionSite(): FakeSite {
  const paths = Array.from({ length: 33 }, (_, i) => `/guide-${i + 1}`);
  const routes: Record<string, ReturnType<typeof html>> = {
    "/": html(page({ title: "Home of the session test site", links: paths })),
  };
  paths.forEach((p, i) => {
    routes[p] = html(page({
      title: `Guide ${i + 1} of the session test site`,
      key: `g${i}`,
      description: null,
      viewport: i % 3 === 0 ? null : undefined,
      links: ["/", paths[(i + 1) % paths.length]],
    }));
  });
  return serveSite(routes);
}

// deno-lint-ignore no-explicit-any
type Any = any;

/** The object an answer holds `field` in: `{field: …}` (before issue 33) or the answer itself. */
function unwrap(s: Any, field: string): Any {
  return s && typeof s === "object" && s[field] && typeof s[field] === "object" ? s[field] : s;
}

/**
 * Runs the session on `client` (connected with a live key that has credits) against `origin`;
 * throws when a step fails. `check` may inspect each step's raw result.
 */
export async function runSession(
  client: Client,
  origin: string,
  check?: (step: string, result: Any) => void,
): Promise<SessionFigures> {
  const steps: Step[] = [];
  const listed = await client.listTools();
  const tools = listed.tools.map((t) => ({ name: t.name, ...size(JSON.stringify(t)) }));
  const listText = JSON.stringify(listed.tools);
  steps.push({ step: "tools/list", ...size(listText), textBytes: 0, structuredBytes: 0 });

  const callStep = async (step: string, name: string, args: Record<string, unknown>) => {
    const res = await client.callTool({ name, arguments: args });
    if (res.isError) throw new Error(`${step}: ${JSON.stringify(res.content)}`);
    const text = (res.content as { type: string; text?: string }[])
      .map((c) => c.text ?? JSON.stringify(c)).join("\n");
    const structured = res.structuredContent === undefined
      ? ""
      : JSON.stringify(res.structuredContent);
    const t = size(text);
    const s = size(structured);
    steps.push({
      step,
      bytes: t.bytes + s.bytes,
      tokens: t.tokens + s.tokens,
      textBytes: t.bytes,
      structuredBytes: s.bytes,
    });
    check?.(step, res);
    return res.structuredContent as Any;
  };

  const project = unwrap(
    await callStep("projects create", "projects", { action: "create", url: origin }),
    "project",
  );
  const started = unwrap(
    await callStep("audits start", "audits", { action: "start", project_id: project.project_id }),
    "audit",
  );
  let audit = started;
  for (let i = 0; i < 10 && audit.status !== "completed"; i++) {
    audit = unwrap(
      await callStep("audits get (wait)", "audits", {
        action: "get",
        audit_id: started.audit_id,
        wait: 30,
      }),
      "audit",
    );
    if (audit.status === "failed") throw new Error(`audit failed: ${JSON.stringify(audit)}`);
  }
  await callStep("audits summary", "audits", { action: "summary", audit_id: audit.audit_id });
  const worst = audit.summary.top_issues[0].check as string;
  await callStep("audits issue (page 1)", "audits", {
    action: "issue",
    audit_id: audit.audit_id,
    check: worst,
  });
  await callStep("audits pages (page 1)", "audits", { action: "pages", audit_id: audit.audit_id });
  let recheck = unwrap(
    await callStep("audits recheck", "audits", {
      action: "recheck",
      audit_id: audit.audit_id,
      check: worst,
      wait: 30,
    }),
    "recheck",
  );
  for (let i = 0; i < 10 && recheck.status !== "completed"; i++) {
    recheck = unwrap(
      await callStep("audits recheck_get (wait)", "audits", {
        action: "recheck_get",
        recheck_id: recheck.recheck_id,
        wait: 30,
      }),
      "recheck",
    );
    if (recheck.status === "failed") throw new Error(`recheck failed: ${JSON.stringify(recheck)}`);
  }
  await callStep("audits share", "audits", { action: "share", audit_id: audit.audit_id });

  return {
    steps,
    tools,
    totalBytes: steps.reduce((a, s) => a + s.bytes, 0),
    totalTokens: steps.reduce((a, s) => a + s.tokens, 0),
  };
}

/** The figures as aligned lines. */
export function formatFigures(label: string, f: SessionFigures): string[] {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  const lines = [`${label}:`];
  for (const s of f.steps) {
    lines.push(
      `  ${s.step.padEnd(28)} ${kb(s.bytes).padStart(9)} ${String(s.tokens).padStart(7)} tok` +
        (s.step === "tools/list"
          ? ""
          : `  (text ${kb(s.textBytes)}, structured ${kb(s.structuredBytes)})`),
    );
  }
  lines.push(
    `  ${"session total".padEnd(28)} ${kb(f.totalBytes).padStart(9)} ${
      String(f.totalTokens).padStart(7)
    } tok`,
  );
  return lines;
}
