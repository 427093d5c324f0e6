/**
 * Staging credentials in the engine: a site behind Basic auth, a header or a cookie answers 401
 * without them and is audited with them; every hop that leaves the project's origin (robots.txt,
 * sitemap and resource redirects to another host, here another port) goes without them, and a
 * redirect from the staging site to another origin is never fetched with them.
 */
import assert from "node:assert/strict";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import type { PageRecord } from "../../domain/audit_engine/crawl/store.ts";
import {
  type SiteAuth,
  siteAuthHeaders,
  siteAuthProblem,
} from "../../domain/audit_engine/site_auth.ts";
import { htmlAnswer, type LoggedSite, serveLogged } from "../helpers/logged_site.ts";
import { page } from "../helpers/sites.ts";

/** A URL's fetch state and status (null when not fetched), from the audit's kept records. */
function recordOf(out: { records: PageRecord[] }, url: string) {
  const r = out.records.find((p) => p.url === url);
  return r ? { state: r.state, status: r.state === "fetched" ? r.status : null } : undefined;
}

const PASSWORD = "Pw-7c1f0e3b-staging";

/** The credential headers a request may carry, lower-case. */
const SECRET_HEADERS = ["authorization", "cookie", "x-staging-token"];

const KINDS: { auth: SiteAuth; ok: (h: Headers) => boolean }[] = [
  {
    auth: { type: "basic", user: "reviewer", password: PASSWORD },
    ok: (h) => h.get("authorization") === `Basic ${btoa(`reviewer:${PASSWORD}`)}`,
  },
  {
    auth: { type: "headers", headers: { "X-Staging-Token": PASSWORD } },
    ok: (h) => h.get("x-staging-token") === PASSWORD,
  },
  {
    auth: { type: "cookie", cookie: `staging_session=${PASSWORD}; theme=dark` },
    ok: (h) => (h.get("cookie") ?? "").includes(`staging_session=${PASSWORD}`),
  },
];

/**
 * The other origin: the staging site's robots.txt and sitemap end up here (through redirects), and
 * its image; it records what it was sent.
 */
function serveOther(staging: () => string): LoggedSite {
  return serveLogged(() => ({
    "/robots.txt": () =>
      new Response(`User-agent: *\nAllow: /\nSitemap: ${staging()}/sitemap.xml\n`, {
        headers: { "content-type": "text/plain" },
      }),
    "/sitemap.xml": () =>
      new Response(
        `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
          `<url><loc>${staging()}/s1</loc></url></urlset>`,
        { headers: { "content-type": "application/xml" } },
      ),
    "/img.png": () => new Response(null, { status: 200, headers: { "content-type": "image/png" } }),
    "/landing": () => htmlAnswer(page({ key: "landing" })),
  }));
}

/** A staging site that answers 401 to any request without the right credentials. */
function serveStaging(other: LoggedSite, ok: (h: Headers) => boolean): LoggedSite {
  const guard = (h: (req: Request) => Response) => (req: Request) =>
    ok(req.headers) ? h(req) : new Response("login required", {
      status: 401,
      headers: { "www-authenticate": 'Basic realm="staging"', "content-type": "text/plain" },
    });
  return serveLogged(() => ({
    // robots.txt and the sitemap live on another host (redirects, followed by hand).
    "/robots.txt": guard(() => Response.redirect(`${other.origin}/robots.txt`, 301)),
    "/sitemap.xml": guard(() => Response.redirect(`${other.origin}/sitemap.xml`, 302)),
    "/": guard(() =>
      htmlAnswer(page({
        links: ["/a", "/go"],
        body: `<img src="/img.png" alt="A picture of the staging site" width="10" height="10">`,
      }))
    ),
    "/a": guard(() => htmlAnswer(page({ key: "a" }))),
    "/s1": guard(() => htmlAnswer(page({ key: "s1" }))),
    // Leaves the origin: recorded as a redirect, its target never fetched with the credentials.
    "/go": guard(() => Response.redirect(`${other.origin}/landing`, 302)),
    // A resource that lives on another host.
    "/img.png": guard(() => Response.redirect(`${other.origin}/img.png`, 302)),
  }));
}

function audit(site: LoggedSite, auth?: SiteAuth) {
  return runAuditDetailed({
    startUrl: site.url("/"),
    maxPages: 20,
    concurrency: 2,
    allowPrivate: true,
    timeoutMs: 3_000,
    keepRecords: true,
    auth,
  });
}

for (const { auth, ok } of KINDS) {
  Deno.test(`auth ${auth.type}: the staging site is audited; no other origin gets the credentials`, async () => {
    let stagingOrigin = "";
    const other = serveOther(() => stagingOrigin);
    const staging = serveStaging(other, ok);
    stagingOrigin = staging.origin;
    try {
      // Without credentials the audit meets the login wall (the site does enforce them).
      const walled = await audit(staging);
      assert.deepEqual(recordOf(walled, staging.url("/")), { state: "fetched", status: 401 });
      staging.log.length = 0;
      other.log.length = 0;

      const out = await audit(staging, auth);
      for (const p of ["/", "/a", "/s1"]) {
        assert.deepEqual(recordOf(out, staging.url(p)), { state: "fetched", status: 200 }, p);
      }
      assert.deepEqual(recordOf(out, staging.url("/go")), { state: "fetched", status: 302 });
      // Every request to the staging origin carried them (none was refused)...
      assert.ok(staging.log.length >= 6, `${staging.log.length} requests`);
      assert.deepEqual(staging.log.filter((r) => r.status === 401).map((r) => r.path), []);
      assert.ok(staging.log.every((r) => ok(r.headers)));
      // ...and the other origin was asked (robots.txt, the resource) but never sent them.
      const asked = new Set(other.log.map((r) => r.path));
      assert.ok(asked.has("/robots.txt"), [...asked].join(" "));
      assert.ok(asked.has("/img.png"), [...asked].join(" "));
      assert.ok(!asked.has("/landing"), "a page redirecting off the site is not followed");
      for (const r of other.log) {
        for (const h of SECRET_HEADERS) {
          assert.equal(r.headers.get(h), null, `${r.path} was sent ${h}`);
        }
      }
      // The sitemap redirected there was read there, without them; its URL was then crawled.
      assert.ok(asked.has("/sitemap.xml"));
      assert.ok(staging.to("/sitemap.xml").every((r) => ok(r.headers)));
    } finally {
      await staging.close();
      await other.close();
    }
  });
}

Deno.test("auth rules: header names are tokens, not hop-by-hop or the crawler's own, once each", () => {
  const h = (headers: Record<string, string>) => siteAuthProblem({ type: "headers", headers });
  assert.equal(h({ "X-Token": "a" }), null);
  assert.equal(h({ Authorization: "Bearer x" }), null, "a bearer token is a header like any");
  assert.deepEqual(h({ "Bad Name": "a" })?.path, ["headers", "Bad Name"]);
  for (const name of ["Host", "content-length", "Connection", "Transfer-Encoding", "User-Agent"]) {
    assert.match(h({ [name]: "a" })?.message ?? "", /cannot be set/, name);
  }
  assert.match(h({ "Proxy-Foo": "a" })?.message ?? "", /cannot be set/);
  assert.match(h({ "X-A": "1", "x-a": "2" })?.message ?? "", /twice/);
  assert.match(h({ "X-A": "line\r\nInjected: yes" })?.message ?? "", /visible ASCII/);
  assert.match(h({})?.message ?? "", /1 to 8 headers/);
  assert.match(
    h(Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`X-${i}`, "v"])))?.message ?? "",
    /1 to 8/,
  );
  assert.deepEqual(
    siteAuthProblem({ type: "basic", user: "a:b", password: "p" })?.path,
    ["user"],
  );
  assert.equal(siteAuthProblem({ type: "cookie", cookie: "a=b\nc" })?.path[0], "cookie");
  assert.deepEqual(siteAuthHeaders({ type: "basic", user: "ü", password: "p" }), {
    authorization: `Basic ${btoa(String.fromCharCode(0xc3, 0xbc) + ":p")}`,
  });
});
