/**
 * Security: transport (https, redirects, TLS, HSTS), content loaded or submitted over http, the
 * response headers that harden pages, what the server says about its software, and front-end
 * libraries with known vulnerabilities. Every page check returns its evidence (types.ts).
 *
 * @module
 */
import type { Check, Evidence, PageContext, PageVerdict } from "../types.ts";
import { flag, isHttps } from "./helpers.ts";
import { advisoriesFor, type Detected, libraryFromUrl } from "../js_libraries.ts";

const ONE_YEAR = 31_536_000;
const SAFE_REFERRER = new Set([
  "no-referrer",
  "strict-origin",
  "strict-origin-when-cross-origin",
  "no-referrer-when-downgrade",
  "same-origin",
]);
const ACTIVE_ELEMENTS = new Set(["script", "link", "iframe"]);
/** A version number: "nginx/1.18.0", "Apache/2.4", "WordPress 6.4.2", "Drupal 10". */
const VERSIONED = /\d/;

/** Fired with these items, or not fired when there are none (never an empty array). */
function items(list: Evidence[]): PageVerdict {
  return list.length > 0 ? list : false;
}

function hstsWeak(p: PageContext): PageVerdict {
  const h = p.headers.get("strict-transport-security");
  const m = h ? /max-age\s*=\s*"?(\d+)/i.exec(h) : null;
  if (m && Number(m[1]) >= ONE_YEAR) return false;
  return { strict_transport_security: h };
}

function cspOf(p: PageContext): string | null {
  return p.headers.get("content-security-policy");
}

function clickjackable(p: PageContext): PageVerdict {
  const xfo = (p.headers.get("x-frame-options") ?? "").trim().toLowerCase();
  if (xfo === "deny" || xfo === "sameorigin") return false;
  if (/(^|;)\s*frame-ancestors\s/i.test(cspOf(p) ?? "")) return false;
  // ALLOW-FROM is ignored by current browsers, so it protects nothing.
  return { x_frame_options: xfo === "" ? null : xfo, csp_frame_ancestors: false };
}

function sniffable(p: PageContext): PageVerdict {
  const v = p.headers.get("x-content-type-options");
  return (v ?? "").trim().toLowerCase() === "nosniff" ? false : { x_content_type_options: v };
}

function cspMissing(p: PageContext): PageVerdict {
  if (cspOf(p) !== null || p.facts.metaCsp) return false;
  return {
    content_security_policy: null,
    report_only: p.headers.has("content-security-policy-report-only"),
  };
}

function referrerUnsafe(p: PageContext): PageVerdict {
  const raw = p.headers.get("referrer-policy");
  const rp = (raw ?? "").toLowerCase().split(",").map((s) => s.trim()).filter(Boolean);
  // The last recognised token wins in browsers.
  if (rp.length > 0 && SAFE_REFERRER.has(rp[rp.length - 1])) return false;
  return { referrer_policy: raw };
}

function badCookies(p: PageContext): PageVerdict {
  const out: Evidence[] = [];
  for (const c of p.headers.getSetCookie()) {
    const parts = c.split(";").map((s) => s.trim());
    const attrs = parts.slice(1).map((a) => a.toLowerCase());
    const missing: string[] = [];
    if (isHttps(p) && !attrs.includes("secure")) missing.push("Secure");
    if (!attrs.includes("httponly")) missing.push("HttpOnly");
    if (!attrs.some((a) => a.startsWith("samesite"))) missing.push("SameSite");
    if (missing.length > 0) {
      const name = parts[0].split("=")[0].trim();
      out.push({ cookie: name, missing });
    }
  }
  return items(out);
}

/** Response headers that name server or framework software (with a version where it matters). */
const DISCLOSING_HEADERS: readonly { name: string; needsVersion: boolean }[] = [
  { name: "server", needsVersion: true },
  { name: "x-powered-by", needsVersion: false },
  { name: "x-aspnet-version", needsVersion: false },
  { name: "x-aspnetmvc-version", needsVersion: false },
  { name: "x-generator", needsVersion: true },
];

function versionDisclosure(p: PageContext): PageVerdict {
  const out: Evidence[] = [];
  for (const h of DISCLOSING_HEADERS) {
    const v = p.headers.get(h.name);
    if (v === null || v.trim() === "") continue;
    if (h.needsVersion && !VERSIONED.test(v)) continue;
    out.push({ source: "header", name: h.name, value: v });
  }
  const g = p.facts.generator;
  if (g && VERSIONED.test(g)) out.push({ source: "meta", name: "generator", value: g });
  return items(out);
}

function vulnerableLibraries(p: PageContext): PageVerdict {
  const out: Evidence[] = [];
  const found = (script: string, lib: Detected, fromUrl: Detected | null = null) => {
    const adv = advisoriesFor(lib.library, lib.version);
    if (adv.length === 0) return;
    // `url` is the page's (the engine adds it); the script is named apart.
    const item: Evidence = {
      script,
      library: lib.library,
      version: lib.version,
      detected_from: lib.from,
      advisories: [...new Set(adv.flatMap((a) => a.ids))],
    };
    // The file name said otherwise: the content is what runs.
    if (fromUrl !== null && fromUrl.version !== lib.version) item.url_names = fromUrl.version;
    out.push(item);
  };
  for (const url of p.facts.libraryScripts) {
    // Only the file's content is evidence of a version; a file that could not be read (or
    // names none) is not reported either way.
    const lib = p.scriptLibraries?.get(url);
    if (lib !== undefined) found(url, lib, libraryFromUrl(url));
  }
  for (const lib of p.facts.inlineLibraries) found(`inline script #${lib.index}`, lib);
  return items(out);
}

/** The http subresources of a kind; fired on `count`, evidence from the capped list. */
function httpResources(p: PageContext, count: number, active: boolean | null): PageVerdict {
  if (count === 0) return false;
  const out: Evidence[] = [];
  for (const r of p.facts.httpResources) {
    if (active === null || ACTIVE_ELEMENTS.has(r.element) === active) {
      out.push({ resource: r.url, element: r.element });
    }
  }
  return out.length > 0 ? out : true;
}

export const securityChecks: Check[] = [
  {
    id: "not_https",
    category: "security",
    severity: "critical",
    impact: 3,
    effort: "medium",
    title: "Pages served over plain http",
    detects: "HTML pages whose final URL is http://.",
    scope: "page",
    eligibility: "html",
    evaluate: (p) => !isHttps(p) && { url: p.url.href },
  },
  {
    id: "http_not_redirected",
    category: "security",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "http:// does not redirect to https://",
    detects: "http://host/ serves content instead of redirecting to the https site.",
    scope: "site",
    evaluate: (s) => {
      if (s.httpProbe === "not_applicable" || s.httpProbe === "unreachable") {
        // An http start URL that never reaches https is covered by not_https; still say so here.
        if (s.start.url.startsWith("http:") && s.home && s.home.url.startsWith("http:")) {
          return flag(s.home.state === "fetched" && s.home.status < 400);
        }
        return null;
      }
      return flag(s.httpProbe === "serves_http");
    },
  },
  {
    id: "tls_invalid",
    category: "security",
    severity: "critical",
    impact: 5,
    effort: "low",
    title: "TLS handshake or certificate fails",
    detects: "Expired, untrusted or wrong-host certificates, or a failing TLS handshake.",
    scope: "site",
    evaluate: (s) => {
      const https = s.records.filter((r) =>
        r.url.startsWith("https:") && (r.state === "fetched" || r.state === "failed")
      );
      if (https.length === 0) return null;
      return flag(https.some((r) => r.failure === "tls"));
    },
  },
  {
    id: "mixed_content_active",
    category: "security",
    severity: "critical",
    impact: 3,
    effort: "medium",
    title: "https pages load scripts, styles or frames over http",
    detects: "Active mixed content (script, stylesheet, iframe) that browsers block.",
    scope: "page",
    eligibility: "html",
    applies: isHttps,
    evaluate: (p) => httpResources(p, p.facts.mixedActive, true),
  },
  {
    id: "mixed_content_passive",
    category: "security",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "https pages load images or media over http",
    detects: "Passive mixed content (img, audio, video, source).",
    scope: "page",
    eligibility: "html",
    applies: isHttps,
    evaluate: (p) => httpResources(p, p.facts.mixedPassive, false),
  },
  {
    id: "http_subresources",
    category: "security",
    severity: "warning",
    impact: 1,
    effort: "low",
    title: "http pages load resources from other hosts over http",
    detects:
      "Scripts, stylesheets, frames, images or media from another host over http:// (or //) on " +
      "an http page: a second party anyone on the path can tamper with (same-host ones are the " +
      "page's own not_https; on https pages they are mixed content).",
    scope: "page",
    eligibility: "html",
    applies: (p) => !isHttps(p),
    evaluate: (p) => httpResources(p, p.facts.httpResourceCount, null),
  },
  {
    id: "protocol_relative_resources",
    category: "security",
    severity: "info",
    impact: 1,
    effort: "low",
    title: "Protocol-relative (//) resource URLs",
    detects: "Subresources referenced as //host/path; use explicit https.",
    scope: "page",
    eligibility: "html",
    applies: isHttps,
    evaluate: (p) =>
      p.facts.protocolRelative > 0 &&
      { count: p.facts.protocolRelative, resources: p.facts.samples.protocolRelative },
  },
  {
    id: "http_links",
    category: "security",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "https pages link to internal http URLs",
    detects: 'Internal <a href="http://..."> on an https site.',
    scope: "page",
    eligibility: "indexable",
    applies: isHttps,
    evaluate: (p) =>
      p.facts.httpInternalLinks > 0 &&
      { count: p.facts.httpInternalLinks, links: p.facts.samples.httpInternalLinks },
  },
  {
    id: "insecure_form",
    category: "security",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "Forms that submit over http",
    detects:
      "A <form> whose action is http:// (or, on an http page, relative or missing): what users " +
      "type travels in clear text. A form on an http page posting to https is not counted here " +
      "(the page itself is not_https).",
    scope: "page",
    eligibility: "html",
    applies: (p) => p.facts.forms > 0,
    evaluate: (p) =>
      p.facts.insecureFormActions > 0 &&
      (p.facts.insecureForms.length > 0
        ? p.facts.insecureForms.map((action) => ({ action }))
        : true),
  },
  {
    id: "hsts_missing",
    category: "security",
    severity: "warning",
    impact: 1,
    effort: "low",
    title: "No HSTS header of at least one year",
    detects: "https responses without Strict-Transport-Security, or max-age under 31,536,000.",
    scope: "page",
    eligibility: "html",
    applies: isHttps,
    evaluate: hstsWeak,
  },
  {
    id: "csp_missing",
    category: "security",
    severity: "warning",
    impact: 1,
    effort: "medium",
    title: "No Content-Security-Policy",
    detects:
      "Pages without a Content-Security-Policy header or <meta http-equiv> (a report-only policy " +
      "enforces nothing).",
    scope: "page",
    eligibility: "html",
    evaluate: cspMissing,
  },
  {
    id: "clickjacking_unprotected",
    category: "security",
    severity: "warning",
    impact: 1,
    effort: "low",
    title: "Pages can be framed by any site (clickjacking)",
    detects: "Neither X-Frame-Options DENY/SAMEORIGIN nor a CSP frame-ancestors directive.",
    scope: "page",
    eligibility: "html",
    evaluate: clickjackable,
  },
  {
    id: "mime_sniffing_unprotected",
    category: "security",
    severity: "warning",
    impact: 1,
    effort: "low",
    title: "No X-Content-Type-Options: nosniff",
    detects: "X-Content-Type-Options is not nosniff: browsers may guess content types and run an " +
      "upload as a script or style.",
    scope: "page",
    eligibility: "html",
    evaluate: sniffable,
  },
  {
    id: "hardening_headers",
    category: "security",
    severity: "info",
    impact: 1,
    effort: "low",
    title: "No safe Referrer-Policy",
    detects: "Referrer-Policy absent or not one of no-referrer, same-origin, strict-origin, " +
      "strict-origin-when-cross-origin, no-referrer-when-downgrade (clickjacking, nosniff and " +
      "CSP are scored on their own).",
    scope: "page",
    eligibility: "html",
    evaluate: referrerUnsafe,
  },
  {
    id: "cookie_flags",
    category: "security",
    severity: "warning",
    impact: 1,
    effort: "low",
    title: "Cookies without Secure, HttpOnly or SameSite",
    detects: "Set-Cookie lacking Secure (on https), HttpOnly or SameSite.",
    scope: "page",
    eligibility: "html",
    applies: (p) => p.headers.has("set-cookie"),
    evaluate: badCookies,
  },
  {
    id: "version_disclosure",
    category: "security",
    severity: "warning",
    impact: 1,
    effort: "low",
    title: "Server or framework version disclosed",
    detects:
      "Server or X-Generator headers with a version number, any X-Powered-By, X-AspNet-Version " +
      'or X-AspNetMvc-Version header, or <meta name="generator"> with a version.',
    scope: "page",
    eligibility: "html",
    evaluate: versionDisclosure,
  },
  {
    id: "vulnerable_js_library",
    category: "security",
    severity: "warning",
    impact: 2,
    effort: "medium",
    title: "Front-end libraries with known vulnerabilities",
    detects:
      "jQuery, jQuery UI, AngularJS, Bootstrap, Lodash or Moment.js versions listed in the " +
      "bundled advisory table (domain/audit_engine/js_libraries.ts), as the content confirms them " +
      "whatever the file's name: the banner of the script file or a version string in its first " +
      "64 KB (every same-site script is read), or the banner of a library bundled into an " +
      "inline script. A file name alone is not evidence.",
    scope: "page",
    eligibility: "html",
    applies: (p) => p.facts.libraryScripts.length > 0 || p.facts.inlineLibraries.length > 0,
    evaluate: vulnerableLibraries,
  },
];
