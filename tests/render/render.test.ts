/**
 * The render engine against a loopback fixture site in the real packaged Chromium: each defect
 * page fires its check and the clean pages fire none; every request goes through the address
 * guard (private and metadata addresses refused even with loopback allowed, Chromium's own DNS
 * never used); lab metrics under throttling; the pool survives a killed browser and a hung page,
 * and recycles the browser at its caps.
 */
import assert from "node:assert/strict";
import { BrowserPool, RenderFailedError } from "../../domain/render/pool.ts";
import { renderPage, type RenderResult } from "../../domain/render/renderer.ts";
import { evaluateRenderedPage } from "../../domain/render/checks.ts";
import { FIXTURE_NETWORK, startFixtureSite, UNHURRIED_MS } from "./fixture_site.ts";

function fired(r: RenderResult): string[] {
  return evaluateRenderedPage({ result: r, now: Date.now() }).findings.map((f) => f.check.id)
    .sort();
}

function evidence(r: RenderResult, id: string) {
  const f = evaluateRenderedPage({ result: r, now: Date.now() }).findings.find((x) =>
    x.check.id === id
  );
  assert.ok(f, `${id} fired on ${r.url}`);
  return f.evidence;
}

const OPTS = { sanitizeResources: false, sanitizeOps: false };

Deno.test({
  name: "rendered pages: each defect fires its check, clean pages fire nothing",
  ...OPTS,
  fn: async () => {
    const site = startFixtureSite();
    const pool = new BrowserPool({ maxPagesInFlight: 2 });
    try {
      const paths = [
        "/clean",
        "/other",
        "/noindex-removed",
        "/links-by-js",
        "/content-by-js",
        "/tiny-text",
        "/tiny-taps",
        "/too-wide",
        "/redirect-me",
        "/webmcp-ok",
        "/webmcp-bad",
        "/unnamed-controls",
      ];
      const results = new Map<string, RenderResult>();
      await Promise.all(paths.map(async (p) => {
        results.set(
          p,
          await renderPage(site.origin + p, {
            pool,
            network: FIXTURE_NETWORK,
            lab: false,
            timeoutMs: UNHURRIED_MS,
          }),
        );
      }));
      const r = (p: string) => results.get(p)!;
      assert.ok(pool.stats.peakInFlight <= 2, "pages in flight capped");
      assert.equal(pool.stats.launches, 1);

      assert.deepEqual(fired(r("/clean")), []);
      assert.deepEqual(fired(r("/other")), []);

      assert.deepEqual(fired(r("/noindex-removed")), ["noindex_only_in_raw_html"]);
      assert.equal(
        evidence(r("/noindex-removed"), "noindex_only_in_raw_html").raw_robots,
        "noindex",
      );

      assert.deepEqual(fired(r("/links-by-js")), ["links_only_after_js"]);
      const links = evidence(r("/links-by-js"), "links_only_after_js");
      assert.equal(links.count, 2);
      assert.deepEqual(links.links, [`${site.origin}/js-one`, `${site.origin}/js-two`]);

      assert.deepEqual(fired(r("/content-by-js")), [
        "content_requires_js",
        "h1_changed_by_js",
        "title_changed_by_js",
      ]);
      const content = evidence(r("/content-by-js"), "content_requires_js");
      assert.equal(content.raw_words, 0);
      assert.ok((content.rendered_words as number) >= 100);
      assert.equal(
        evidence(r("/content-by-js"), "title_changed_by_js").rendered_title,
        "App loaded",
      );

      assert.deepEqual(fired(r("/tiny-text")), ["text_too_small"]);
      assert.ok((evidence(r("/tiny-text"), "text_too_small").small_text_share as number) > 0.4);

      assert.deepEqual(fired(r("/tiny-taps")), ["tap_targets_small"]);
      assert.equal(evidence(r("/tiny-taps"), "tap_targets_small").failing, 8);

      assert.deepEqual(fired(r("/too-wide")), ["content_wider_than_viewport"]);
      const wide = evidence(r("/too-wide"), "content_wider_than_viewport");
      assert.equal(wide.viewport_width, 412);
      assert.ok((wide.scroll_width as number) >= 1000);
      assert.match(String(wide.widest_element), /^div#banner/);

      // WebMCP: registrations recorded by the shim (the packaged Chromium has no modelContext).
      assert.deepEqual(fired(r("/webmcp-ok")), ["webmcp_tools"]);
      const tools = evidence(r("/webmcp-ok"), "webmcp_tools");
      assert.deepEqual(tools.tools, ["search_products"]);
      assert.equal(tools.native, false);
      assert.deepEqual(fired(r("/webmcp-bad")), ["webmcp_tool_invalid", "webmcp_tools"]);
      const bad = evidence(r("/webmcp-bad"), "webmcp_tool_invalid");
      assert.equal(bad.count, 2);
      assert.match(String(bad.problems), /add to cart: name is not/);
      assert.match(String(bad.problems), /checkout: no description, inputSchema is not/);
      // Agent-relevant accessibility: the unnamed button and link and the unknown role.
      assert.deepEqual(fired(r("/unnamed-controls")), ["agent_accessibility"]);
      const a11y = String(evidence(r("/unnamed-controls"), "agent_accessibility").rules);
      for (const rule of ["button-name", "link-name", "aria-roles"]) {
        assert.match(a11y, new RegExp(rule));
      }

      // A navigation redirect is followed as a fresh, guarded navigation: the page's URL is true.
      assert.equal(r("/redirect-me").finalUrl, `${site.origin}/clean`);
      assert.equal(r("/redirect-me").status, 200);
      assert.deepEqual(fired(r("/redirect-me")), []);
      // No lab metrics outside the lab sample.
      assert.equal(r("/clean").lab, null);
    } finally {
      await pool.close();
      await site.close();
    }
  },
});

Deno.test({
  name: "every request of the page goes through the guard: private and metadata refused",
  ...OPTS,
  fn: async () => {
    const site = startFixtureSite();
    const pool = new BrowserPool();
    try {
      const r = await renderPage(`${site.origin}/guarded`, {
        pool,
        network: FIXTURE_NETWORK,
        lab: false,
      });
      const reasons = new Map(r.blocked.map((b) => [b.url, b.reason]));
      assert.equal(reasons.get("http://169.254.169.254/latest/meta-data/"), "private_address");
      assert.equal(reasons.get("http://10.0.0.1/internal.png"), "private_address");
      assert.equal(reasons.get("http://192.168.1.1/"), "private_address");
      assert.equal(reasons.get("http://[::ffff:a00:2]/"), "private_address");
      // A name resolving to the metadata address (the rebinding shape) is refused on its answer.
      assert.equal(reasons.get("http://metadata.test/computeMetadata/v1/"), "private_address");
      assert.equal(reasons.get(`ws://127.0.0.1:${site.port}/ws`), "websocket");
      // rebind.test exists only in our resolver (Chromium's own DNS answers nothing): the pixel
      // arrived, so the request was made by the guarded fetch, not by the browser.
      assert.ok(site.hits.includes("/pixel.svg"), "guarded fetch served the resolvable host");
      assert.ok(!site.hits.includes("/ws"), "no websocket reached the server");
      assert.deepEqual(fired(r), ["requests_refused"]);
      assert.equal(evidence(r, "requests_refused").count, 6);
    } finally {
      await pool.close();
      await site.close();
    }
  },
});

Deno.test({
  name: "lab metrics under mobile throttling: slow LCP, layout shift and blocking time",
  ...OPTS,
  fn: async () => {
    const site = startFixtureSite();
    const pool = new BrowserPool();
    try {
      // One after the other: rendered side by side in a full suite run, the shift page once showed
      // neither its shift nor its long task (one CI run); this way neither page's throttled work
      // waits on the other's (the first parses a 300 KiB SVG on a 4x slowed CPU).
      const lcp = await renderPage(`${site.origin}/lab-lcp`, {
        pool,
        network: FIXTURE_NETWORK,
        lab: true,
      });
      const shift = await renderPage(`${site.origin}/lab-shift`, {
        pool,
        network: FIXTURE_NETWORK,
        lab: true,
      });
      // 300 KiB over 1,474.56 kbit/s is ~1.7 s, after 562.5 ms latency for page and image each.
      // Parsing that SVG on a 4x slowed CPU is a real long task: on a loaded machine it passed
      // 200 ms of TBT (measured), so only the checks the page must fire or never fire are asserted
      // here (tests/render/render_accuracy.test.ts labels every lab check with wide margins).
      assert.ok(fired(lcp).includes("lcp_slow"), fired(lcp).join(","));
      assert.ok(!fired(lcp).includes("cls_high"));
      const e = evidence(lcp, "lcp_slow");
      const lcpMs = e.lcp_ms as number;
      assert.ok(lcpMs > 2800, `lcp ${lcpMs}`);
      assert.equal(e.rating, lcpMs > 4000 ? "poor" : "needs_improvement");
      assert.equal(e.resource, `${site.origin}/big.svg`);
      assert.equal(lcp.lab!.requests, 2);
      assert.ok(lcp.lab!.transferBytes > 300 * 1024);
      assert.ok(lcp.lab!.cls < 0.01);

      // Its LCP is wall time on a throttled page: a loaded machine takes it past 2.5 s (seen
      // once in a full run), so whether lcp_slow fires is not this page's to say.
      assert.deepEqual(fired(shift).filter((c) => c !== "lcp_slow"), ["cls_high", "tbt_high"]);
      assert.ok(shift.lab!.cls > 0.1, `cls ${shift.lab!.cls}`);
      assert.ok(shift.lab!.tbtMs > 200, `tbt ${shift.lab!.tbtMs}`);
      // The document alone waited the request latency: throttling was applied.
      assert.ok(shift.lab!.fcpMs! >= 562, `fcp ${shift.lab!.fcpMs}`);
    } finally {
      await pool.close();
      await site.close();
    }
  },
});

Deno.test({
  name: "pool: a killed browser fails its page, the next page renders in a fresh one",
  ...OPTS,
  fn: async () => {
    const site = startFixtureSite();
    const pool = new BrowserPool();
    try {
      const pending = renderPage(`${site.origin}/hold`, {
        pool,
        network: FIXTURE_NETWORK,
        lab: false,
      });
      await site.held; // the page is mid-load: its document request is at the server
      const pid = pool.browserMainPid();
      assert.ok(pid !== null, "the browser's process is found in /proc");
      Deno.kill(pid, "SIGKILL");
      await assert.rejects(pending, (e) => e instanceof RenderFailedError && e.kind === "crashed");
      assert.equal(pool.stats.crashes, 1);
      const next = await renderPage(`${site.origin}/clean`, {
        pool,
        network: FIXTURE_NETWORK,
        lab: false,
      });
      assert.equal(next.rendered.title, "A clean page");
      assert.equal(pool.stats.launches, 2);
    } finally {
      await pool.close();
      await site.close();
    }
  },
});

Deno.test({
  name: "pool: a hung page times out, and the browser is recycled at its caps",
  ...OPTS,
  fn: async () => {
    const site = startFixtureSite();
    // Any memory is over a 1-byte cap: the browser is replaced after every page.
    const pool = new BrowserPool({ maxBrowserBytes: 1 });
    try {
      await assert.rejects(
        renderPage(`${site.origin}/hang-js`, {
          pool,
          network: FIXTURE_NETWORK,
          lab: false,
          timeoutMs: 2000,
        }),
        (e) => e instanceof RenderFailedError && e.kind === "timeout",
      );
      const a = await renderPage(`${site.origin}/clean`, {
        pool,
        network: FIXTURE_NETWORK,
        lab: false,
      });
      assert.equal(a.rendered.h1, "Clean");
      assert.equal(pool.stats.timeouts, 1);
      assert.ok(pool.stats.peakBrowserBytes > 10 * 1024 * 1024, "memory read from /proc");
      assert.equal(pool.stats.recycled, 2);
      assert.equal(pool.stats.launches, 2);
      assert.equal(pool.browserPids().length, 0, "no browser left running");
    } finally {
      await pool.close();
      await site.close();
    }
  },
});
