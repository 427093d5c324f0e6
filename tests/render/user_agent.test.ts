/**
 * Rendered pages ask as the audit's `user_agent` preset: over HTTP, a rendered audit with
 * `googlebot_smartphone` has the browser's requests (the page's own script included) carry the
 * Googlebot token and our honest name in a Chrome User-Agent, as its raw crawl does; a default
 * rendered audit's browser never says Googlebot. And `browserUserAgent` per preset.
 */
import assert from "node:assert/strict";
import {
  browserUserAgent,
  crawlerIdentity,
  USER_AGENT_PRESETS,
} from "../../domain/audit_engine/user_agents.ts";
import { withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { isAgentProbe, serveSite } from "../helpers/sites.ts";
import { page } from "./fixture_site.ts";

const OPTS = { sanitizeResources: false, sanitizeOps: false };
const RENDERED = { timeoutMs: 120_000 };
const SELF = "SerpwrightBot/1.0; +https://serpwright.com/bot";

Deno.test("browserUserAgent: a Chrome User-Agent per preset, the preset's token and our name", () => {
  for (const preset of USER_AGENT_PRESETS) {
    const ua = browserUserAgent(preset);
    assert.match(ua, /^Mozilla\/5\.0 .*AppleWebKit\/537\.36 .*Chrome\/\d+\.\d+\.\d+\.\d+ /, preset);
    assert.ok(ua.includes(SELF), `${preset}: ${ua}`);
    assert.ok(!ua.includes("google.com") && !ua.includes("bing.com"), `${preset}: ${ua}`);
  }
  // Google's smartphone renderer's form, our name where Google puts its bot page.
  assert.equal(
    browserUserAgent("googlebot_smartphone"),
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like " +
      "Gecko) Chrome/140.0.0.0 Mobile Safari/537.36 (compatible; Googlebot/2.1; " + SELF + ")",
  );
  // The desktop presets' raw User-Agents already are Chrome's desktop form.
  assert.equal(
    browserUserAgent("googlebot_desktop"),
    crawlerIdentity("googlebot_desktop").userAgent,
  );
  assert.equal(browserUserAgent("bingbot"), crawlerIdentity("bingbot").userAgent);
  assert.match(browserUserAgent("bingbot"), /bingbot\/2\.0/);
  // Ours: a mobile Chrome, no crawler's token; absent or unknown (older records) is ours.
  const ours = browserUserAgent("serpwright");
  assert.match(ours, /Mobile Safari\/537\.36 \(compatible; SerpwrightBot/);
  assert.ok(!/googlebot|bingbot/i.test(ours));
  assert.equal(browserUserAgent(), ours);
  assert.equal(browserUserAgent("curl"), ours);
});

Deno.test({
  name: "rendered audit: the browser asks as the audit's user_agent preset (googlebot_smartphone " +
    "says Googlebot and SerpwrightBot; the default never says Googlebot)",
  ...OPTS,
  fn: async () => {
    // Every request's path and User-Agent. `/beacon` is asked for only by the page's script, so
    // only the browser asks for it.
    const seen: { path: string; ua: string }[] = [];
    const html = (title: string, body: string) =>
      new Response(page(title, body), { headers: { "content-type": "text/html; charset=utf-8" } });
    const script = `<script>fetch("/beacon?from=" + location.pathname)</script>`;
    const s = serveSite((path) => ({
      handler: (req) => {
        // The agents probes ask as each bot class on purpose (isAgentProbe): not the crawl's.
        const ua = req.headers.get("user-agent") ?? "";
        if (!isAgentProbe(ua)) seen.push({ path, ua });
        if (path === "/") return html("Home", `<p>Home</p><a href="/a">A</a>${script}`);
        if (path === "/a") return html("A", `<p>A</p><a href="/">Home</a>${script}`);
        if (path.startsWith("/beacon")) return new Response("{}");
        return new Response("not found", { status: 404 });
      },
    }));
    try {
      await withApp(async (app) => {
        const { live } = await liveWithCredits(app, 200);
        const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: s.origin } });
        const run = async (body: Record<string, unknown>) => {
          seen.length = 0;
          const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, {
            key: live,
            body: { render: true, ...body },
          });
          assert.equal(started.status, 202, started.text);
          const audit = (await waitForAudit(app, live, started.body.audit_id, RENDERED)).body;
          assert.equal(audit.status, "completed", JSON.stringify(audit));
          assert.equal(audit.render.pages_rendered, 2, JSON.stringify(audit.render));
          const beacons = seen.filter((r) => r.path.startsWith("/beacon"));
          assert.deepEqual(beacons.map((r) => r.path).sort(), [
            "/beacon?from=/",
            "/beacon?from=/a",
          ]);
          return { beacons, all: [...seen] };
        };

        const google = await run({ user_agent: "googlebot_smartphone" });
        for (const { ua } of google.beacons) {
          assert.equal(ua, browserUserAgent("googlebot_smartphone"));
          assert.match(ua, /Chrome\/[\d.]+ Mobile Safari\/537\.36 \(compatible; Googlebot\/2\.1; /);
          assert.ok(ua.includes(SELF), ua);
        }
        // The browser's document requests too (the raw crawl's say Googlebot as well).
        const pages = google.all.filter((r) => r.path === "/" || r.path === "/a");
        assert.ok(pages.some((r) => r.ua === browserUserAgent("googlebot_smartphone")));
        assert.ok(pages.every((r) => r.ua.includes("Googlebot/2.1") && r.ua.includes(SELF)));

        const plain = await run({});
        for (const { ua } of plain.beacons) assert.equal(ua, browserUserAgent("serpwright"));
        assert.ok(plain.all.every((r) => !r.ua.includes("Googlebot")), JSON.stringify(plain.all));
        assert.ok(plain.all.every((r) => r.ua.includes("SerpwrightBot")));
      }, { env: { RENDER_LAB_PAGES: "0", RENDER_MAX_PAGES: "5" } });
    } finally {
      await s.close();
    }
  },
});
