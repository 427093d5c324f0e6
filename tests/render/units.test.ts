/**
 * The pure parts of the render engine: the simulated downlink (injected clock), the sample of
 * pages to render, and the check thresholds at their boundaries.
 */
import assert from "node:assert/strict";
import { MOBILE_SLOW_4G, SimulatedLink } from "../../domain/render/throttling.ts";
import { pickRenderSample, templateKey } from "../../domain/render/sample.ts";
import { evaluateRenderedPage, RENDER_CHECKS } from "../../domain/render/checks.ts";
import type { RenderResult } from "../../domain/render/renderer.ts";
import { extractPageFacts } from "../../domain/audit_engine/facts/extract.ts";
import { ALL_CHECKS } from "../../domain/audit_engine/checks/index.ts";

Deno.test("simulated slow 4G: latency per response, one shared downlink", () => {
  const link = new SimulatedLink(MOBILE_SLOW_4G, () => 0);
  const bps = MOBILE_SLOW_4G.downloadBytesPerSec;
  assert.equal(Math.round(bps), 188744); // 1.6 Mbit/s x 0.9 (Lighthouse DevTools factor)
  assert.equal(link.arrival(0, 0), 562.5);
  // Two responses requested together queue on the link.
  const a = link.arrival(1000, bps); // one second of bytes
  const b = link.arrival(1000, bps);
  assert.equal(a, 1562.5 + 1000);
  assert.equal(b, a + 1000);
});

Deno.test("render sample: home, one page per template by inlinks, then the most linked", () => {
  assert.equal(templateKey("https://a.test/"), "/");
  assert.equal(templateKey("https://a.test/about"), "/*");
  assert.equal(templateKey("https://a.test/blog/x/y"), "/blog/*/*");
  const c = (path: string, inlinks: number) => ({ url: `https://a.test${path}`, inlinks });
  const s = pickRenderSample("https://a.test/", [
    c("/", 50),
    c("/blog/a", 10),
    c("/blog/b", 30),
    c("/shop/x", 12),
    c("/about", 5),
    c("/blog/c", 1),
  ], { labCap: 3, renderCap: 5 });
  assert.deepEqual(s.lab, ["https://a.test/", "https://a.test/blog/b", "https://a.test/shop/x"]);
  assert.deepEqual(s.all, [...s.lab, "https://a.test/blog/a", "https://a.test/about"]);
  // A later round: no home page, and a template an earlier lab page stood for gets none.
  const later = pickRenderSample(null, [c("/blog/d", 3), c("/team", 1), c("/shop/y", 2)], {
    labCap: 2,
    renderCap: 3,
  }, (t) => t === "/blog/*");
  assert.deepEqual(later.lab, ["https://a.test/shop/y", "https://a.test/team"]);
  assert.deepEqual(later.all, [...later.lab, "https://a.test/blog/d"]);
});

function result(over: Partial<RenderResult> & { lcp?: number; cls?: number; tbt?: number }) {
  const url = new URL("https://a.test/p");
  const facts = extractPageFacts("<title>t</title><h1>h</h1><p>words here</p>", url, "a.test");
  return {
    url: url.href,
    finalUrl: url.href,
    status: 200,
    raw: facts,
    rawHeaders: new Headers(),
    rendered: facts,
    lab: {
      profile: "mobile_slow_4g",
      fcpMs: 500,
      lcpMs: over.lcp ?? 1000,
      lcpElement: "img",
      lcpUrl: null,
      cls: over.cls ?? 0,
      clsSources: [],
      tbtMs: over.tbt ?? 0,
      longTasks: 0,
      domContentLoadedMs: 400,
      loadMs: 600,
      transferBytes: 1000,
      requests: 1,
    },
    mobile: {
      viewportWidth: 412,
      scrollWidth: 412,
      widestElement: null,
      tapTargets: { examined: 3, failing: 0, examples: [] },
      text: { chars: 100, smallChars: 40, examples: [] },
    },
    consoleErrors: [],
    consoleErrorCount: 0,
    blocked: [],
    blockedCount: 0,
    failedRequests: 0,
    durationMs: 1,
    ...over,
  } as RenderResult;
}

const ids = (r: RenderResult) =>
  evaluateRenderedPage({ result: r, now: 0 }).findings.map((f) => f.check.id);

Deno.test("check thresholds: Core Web Vitals and legible text at their boundaries", () => {
  assert.deepEqual(ids(result({ lcp: 2500, cls: 0.1, tbt: 200 })), []); // "good" is inclusive
  assert.deepEqual(ids(result({ lcp: 2501, cls: 0.11, tbt: 201 })), [
    "lcp_slow",
    "cls_high",
    "tbt_high",
  ]);
  const poor = evaluateRenderedPage({ result: result({ lcp: 4001 }), now: 0 }).findings[0];
  assert.equal(poor.evidence.rating, "poor");
  assert.equal(poor.evidence.url, "https://a.test/p");
  // 40 % of the text small: 60 % legible passes; 41 % small fails.
  const text = (small: number) =>
    result({
      mobile: { ...result({}).mobile, text: { chars: 100, smallChars: small, examples: [] } },
    });
  assert.deepEqual(ids(text(40)), []);
  assert.deepEqual(ids(text(41)), ["text_too_small"]);
  // Lab checks are not eligible outside the lab sample.
  const dom = evaluateRenderedPage({ result: result({ lab: null }), now: 0 });
  assert.ok(!dom.eligible.includes("lcp_slow"));
  assert.ok(dom.eligible.includes("tap_targets_small"));
});

Deno.test("render checks have the catalogue's shape, are in it once, and ids do not collide", () => {
  const ids = ALL_CHECKS.map((c) => c.id);
  assert.equal(new Set(ids).size, ids.length, "ids are unique");
  for (const c of RENDER_CHECKS) {
    assert.equal(ALL_CHECKS.filter((x) => x.id === c.id).length, 1, c.id);
    assert.match(c.id, /^[a-z][a-z0-9_]+$/);
    assert.ok(
      ["performance", "security", "indexability", "mobile", "structure", "agents"].includes(
        c.category,
      ),
    );
    assert.ok(c.title.length > 0 && c.detects.length > 0);
  }
});

Deno.test("llms.txt: the llmstxt.org shape passes, its usual breakages are named", async () => {
  const { llmsTxtProblems } = await import("../../domain/audit_engine/checks/agent.ts");
  assert.deepEqual(
    llmsTxtProblems("# Site\n\n> Summary\n\n## Docs\n- [Guide](https://x.test/g): notes\n"),
    [],
  );
  assert.deepEqual(llmsTxtProblems("  \n"), ["the file is empty"]);
  const bad = llmsTxtProblems("Site\n# A\n# B\n## Docs\n- plain\n");
  assert.equal(bad.length, 3, bad.join("; "));
});

const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;

Deno.test("a process that may not launch a browser refuses rendering up front", async () => {
  // `deno task start` lacks --allow-run (and the full access playwright-core needs at launch);
  // `start:render` and the tests have --allow-all. Each is asked in a child with those flags.
  const script = await Deno.makeTempFile({ suffix: ".ts" });
  const service = new URL("../../domain/render/service.ts", import.meta.url).href;
  const config = new URL("../../config.ts", import.meta.url).href;
  await Deno.writeTextFile(
    script,
    `import { RenderService } from "${service}";\nimport { loadConfig } from "${config}";\n` +
      `console.log(new RenderService(loadConfig({})).enabled);\n`,
  );
  const run = async (flags: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      // The project's import map: the script lives in a temp dir, outside the project.
      args: ["run", "--quiet", "--no-check", "--config", DENO_JSON, ...flags, script],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    return new TextDecoder().decode(out.stdout).trim();
  };
  try {
    const startFlags = [
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "--allow-write",
      "--allow-sys",
    ];
    assert.equal(await run(startFlags), "false");
    assert.equal(await run(["--allow-all"]), "true");
  } finally {
    await Deno.remove(script);
  }
});
