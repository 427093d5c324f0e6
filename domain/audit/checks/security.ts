/**
 * Security: transport (https, redirects, TLS, HSTS), mixed content and the response headers
 * that harden pages.
 *
 * @module
 */
import type { Check, PageContext } from "../types.ts";
import { flag, isHttps } from "./helpers.ts";

const ONE_YEAR = 31_536_000;
const SAFE_REFERRER = new Set([
  "no-referrer",
  "strict-origin",
  "strict-origin-when-cross-origin",
  "no-referrer-when-downgrade",
  "same-origin",
]);

function hstsWeak(p: PageContext): boolean {
  const h = p.headers.get("strict-transport-security");
  if (!h) return true;
  const m = /max-age\s*=\s*"?(\d+)/i.exec(h);
  return !m || Number(m[1]) < ONE_YEAR;
}

function hardeningMissing(p: PageContext): boolean {
  const csp = p.headers.get("content-security-policy") ?? "";
  const xfo = p.headers.get("x-frame-options");
  if (!xfo && !/frame-ancestors/i.test(csp)) return true;
  if ((p.headers.get("x-content-type-options") ?? "").trim().toLowerCase() !== "nosniff") {
    return true;
  }
  const rp = (p.headers.get("referrer-policy") ?? "").toLowerCase().split(",").map((s) => s.trim())
    .filter(Boolean);
  // The last recognised token wins in browsers.
  return rp.length === 0 || !SAFE_REFERRER.has(rp[rp.length - 1]);
}

function badCookies(p: PageContext): boolean {
  const cookies = p.headers.getSetCookie();
  for (const c of cookies) {
    const attrs = c.toLowerCase().split(";").map((s) => s.trim());
    if (isHttps(p) && !attrs.includes("secure")) return true;
    if (!attrs.includes("httponly")) return true;
    if (!attrs.some((a) => a.startsWith("samesite"))) return true;
  }
  return false;
}

export const securityChecks: Check[] = [
  {
    id: "not_https",
    category: "security",
    severity: "critical",
    title: "Pages served over plain http",
    detects: "HTML pages whose final URL is http://.",
    scope: "page",
    eligibility: "html",
    evaluate: (p) => !isHttps(p),
  },
  {
    id: "http_not_redirected",
    category: "security",
    severity: "warning",
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
    title: "https pages load scripts, styles or frames over http",
    detects: "Active mixed content (script, stylesheet, iframe) that browsers block.",
    scope: "page",
    eligibility: "html",
    applies: isHttps,
    evaluate: (p) => p.facts.mixedActive > 0,
  },
  {
    id: "mixed_content_passive",
    category: "security",
    severity: "warning",
    title: "https pages load images or media over http",
    detects: "Passive mixed content (img, audio, video, source).",
    scope: "page",
    eligibility: "html",
    applies: isHttps,
    evaluate: (p) => p.facts.mixedPassive > 0,
  },
  {
    id: "protocol_relative_resources",
    category: "security",
    severity: "info",
    title: "Protocol-relative (//) resource URLs",
    detects: "Subresources referenced as //host/path; use explicit https.",
    scope: "page",
    eligibility: "html",
    applies: isHttps,
    evaluate: (p) => p.facts.protocolRelative > 0,
  },
  {
    id: "http_links",
    category: "security",
    severity: "warning",
    title: "https pages link to internal http URLs",
    detects: 'Internal <a href="http://..."> on an https site.',
    scope: "page",
    eligibility: "indexable",
    applies: isHttps,
    evaluate: (p) => p.facts.httpInternalLinks > 0,
  },
  {
    id: "insecure_form",
    category: "security",
    severity: "warning",
    title: "Forms on http pages or posting to http",
    detects: "A <form> on an http page, or with an http:// action.",
    scope: "page",
    eligibility: "html",
    applies: (p) => p.facts.forms > 0,
    evaluate: (p) => !isHttps(p) || p.facts.insecureFormActions > 0,
  },
  {
    id: "hsts_missing",
    category: "security",
    severity: "warning",
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
    severity: "info",
    title: "No Content-Security-Policy header",
    detects: "Pages without a CSP response header (a meta CSP is not counted).",
    scope: "page",
    eligibility: "html",
    evaluate: (p) => !p.headers.has("content-security-policy"),
  },
  {
    id: "hardening_headers",
    category: "security",
    severity: "info",
    title: "Missing clickjacking, nosniff or referrer-policy headers",
    detects:
      "No X-Frame-Options nor CSP frame-ancestors, X-Content-Type-Options not nosniff, or no " +
      "safe Referrer-Policy.",
    scope: "page",
    eligibility: "html",
    evaluate: hardeningMissing,
  },
  {
    id: "cookie_flags",
    category: "security",
    severity: "warning",
    title: "Cookies without Secure, HttpOnly or SameSite",
    detects: "Set-Cookie lacking Secure (on https), HttpOnly or SameSite.",
    scope: "page",
    eligibility: "html",
    applies: (p) => p.headers.has("set-cookie"),
    evaluate: badCookies,
  },
];
