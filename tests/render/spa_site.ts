/**
 * A single-page app for the rendered-crawl tests: no page has a single `<a href>` in its served
 * HTML; one script (`/app.js`, the app's router as far as links go) builds every link:
 *
 * - every page: a nav to `/`, `/about`, `/pricing`, `/blog`, and a link to another host
 *   (`OTHER`, a second loopback server, which must never be fetched);
 * - `/about` adds `/team`; `/blog` adds `/blog/first`, `/blog/second` and `/blog/gone` (a 404);
 * - `/about` builds its whole text (content_requires_js); `/pricing` has no `<title>` at all
 *   (title_missing, a raw-HTML check).
 *
 * So a raw crawl sees the home page only; a rendered crawl finds the nav pages in round 1, their
 * links in round 2, and nothing new in round 3.
 *
 * @module
 */
import { GOOD_HEADERS, type Route } from "../helpers/sites.ts";
import { prose } from "./fixture_site.ts";

/** Every page the app has, by the round that first finds it (0: the start URL). */
export const SPA_ROUNDS = {
  0: ["/"],
  1: ["/about", "/pricing", "/blog"],
  2: ["/team", "/blog/first", "/blog/second"],
} as const;

/** A link round 2 finds to a page that does not exist (404). */
export const SPA_BROKEN = "/blog/gone";

/** The app's pages: the served HTML, then what the script adds. */
const HEADERS = {
  ...GOOD_HEADERS,
  "content-security-policy": "default-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
};
const STYLE = `<style>body{font:16px/1.5 sans-serif;margin:16px}a{display:inline-block;` +
  `min-height:48px;min-width:48px;padding:12px}</style>`;

function shell(title: string | null, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">${STYLE}` +
    (title === null ? "" : `<title>${title}</title>`) +
    `<meta name="description" content="A page of the fixture app."></head><body>` +
    `<nav id="nav"></nav><main id="app">${body}</main><script src="/app.js"></script>` +
    `</body></html>`;
}

/** The router script: the nav on every page, plus each page's own links and text. */
function appJs(other: string): string {
  return `
const nav = document.getElementById("nav");
const add = (el, href, text) => {
  const a = document.createElement("a"); a.href = href; a.textContent = text; el.append(a);
};
for (const [href, text] of [["/", "Home"], ["/about", "About"], ["/pricing", "Pricing"],
  ["/blog", "Blog"], [${JSON.stringify(`${other}/elsewhere`)}, "Partner"]]) add(nav, href, text);
const app = document.getElementById("app");
const path = location.pathname;
if (path === "/about") {
  app.innerHTML = "<h1>About us</h1><p>${prose(150)}</p>";
  add(app, "/team", "Our team");
}
if (path === "/blog") {
  add(app, "/blog/first", "First post");
  add(app, "/blog/second", "Second post");
  add(app, "/blog/gone", "A post since removed");
}`;
}

/** The app's routes; links to `other` (an origin) lead off the site. */
export function spaRoutes(other: string): Record<string, Route> {
  const doc = (body: string): Route => ({ body, headers: HEADERS });
  return {
    "/": doc(shell("Fixture app", `<h1>Fixture app</h1><p>${prose(40)}</p>`)),
    "/about": doc(shell("About the fixture app", "")),
    "/pricing": doc(shell(null, `<h1>Pricing</h1><p>${prose(40)}</p>`)),
    "/blog": doc(shell("The fixture blog", `<h1>Blog</h1><p>${prose(40)}</p>`)),
    "/team": doc(shell("The fixture team", `<h1>Team</h1><p>${prose(40)}</p>`)),
    "/blog/first": doc(shell("First post", `<h1>First</h1><p>${prose(60)}</p>`)),
    "/blog/second": doc(shell("Second post", `<h1>Second</h1><p>${prose(60)}</p>`)),
    "/app.js": { body: appJs(other), headers: { "content-type": "text/javascript" } },
    "/robots.txt": { body: "User-agent: *\nAllow: /\n", headers: { "content-type": "text/plain" } },
  };
}
