/**
 * The page an email verification link opens (`/verify-email/{token}`): what the link is for, and a
 * button that confirms it with a POST, so a mail scanner that fetches the link uses nothing up.
 * The rules of the report pages: no script, one stylesheet allowed by its hash, nothing loaded
 * from anywhere, never framed, indexed or sent as a referrer (the token is in the URL), readable
 * at a phone's width. The one form posts to this server only (`form-action 'self'`), carrying a
 * CSRF token that must match an HttpOnly, SameSite=Strict cookie set with the page.
 *
 * @module
 */
import { type Html, html, raw } from "./html.ts";
import { privatePageHeaders } from "./private_page.ts";

const STYLE = `
:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--muted:#57606a;--line:#d0d7de;--accent:#0b57d0;--box:#f6f8fa;--good:#0a7a32;--bad:#b42318}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9aa4ae;--line:#30363d;--accent:#58a6ff;--box:#161b22;--good:#3fb950;--bad:#f85149}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);overflow-wrap:anywhere}
header,main,footer{max-width:32rem;margin:0 auto;padding:0 1rem}
header{padding-top:1rem;padding-bottom:.5rem;border-bottom:1px solid var(--line)}
.brand{font-weight:700;color:var(--fg)}
a{color:var(--accent)}
h1{font-size:1.5rem;line-height:1.25;margin:1.25rem 0 .75rem}
p{margin:.5rem 0}
.box{background:var(--box);border:1px solid var(--line);border-radius:8px;padding:.75rem;margin:1rem 0}
.ok{border-color:var(--good)}
.no{border-color:var(--bad)}
.muted{color:var(--muted);font-size:.9rem}
button{font:inherit;font-weight:600;padding:.75rem 1rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;width:100%;margin-top:.5rem}
footer{margin-top:2rem;padding-top:1rem;padding-bottom:2rem;border-top:1px solid var(--line);font-size:.9rem;color:var(--muted)}
`.trim();

/** The headers of every answer of the page. */
export const VERIFY_PAGE_HEADERS = privatePageHeaders(STYLE, { formAction: "'self'" });

function documentOf(baseUrl: string, title: string, body: Html): string {
  return "<!DOCTYPE html>\n" + html`
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex, nofollow">
        <meta name="referrer" content="no-referrer">
        <title>${title}</title>
        <link rel="icon" href="data:,">
        <style>${raw(STYLE)}</style>
      </head>
      <body>
        <header><a class="brand" href="${baseUrl}/">Serpwright</a></header>
        <main>
    ${body}
        </main>
        <footer>
          <p>Serpwright: SEO automation for AI agents.</p>
        </footer>
      </body>
    </html>
  `.value;
}

/** `2026-11-24 12:00 UTC`. */
function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** The confirmation form of a valid link. */
export function confirmPage(v: {
  baseUrl: string;
  action: string;
  csrf: string;
  maskedEmail: string;
  expiresAt: number;
}): string {
  return documentOf(
    v.baseUrl,
    "Confirm your email address",
    html`
      <h1>Confirm your email address</h1>
      <p>This confirms that <strong>${v.maskedEmail}</strong> is the email address of a
      Serpwright account.</p>
      <form method="post" action="${v.action}">
        <input type="hidden" name="csrf" value="${v.csrf}">
        <button type="submit">Confirm my email address</button>
      </form>
      <p class="muted">The link works once, until ${utc(v.expiresAt)}. If you did not ask for
      this, close this page: nothing changes.</p>
    `,
  );
}

/** Verified: the page shown when no return address was given. */
export function verifiedPage(baseUrl: string): string {
  return documentOf(
    baseUrl,
    "Email address verified",
    html`
      <h1>Email address verified</h1>
      <div class="box ok">
        <p>Thank you: the account's email address is verified. You can close
      this page.</p>
      </div>
    `,
  );
}

/** A link that cannot be used (unknown, replaced, used, expired) or a refused form. */
export function failurePage(baseUrl: string, title: string, message: string): string {
  return documentOf(
    baseUrl,
    title,
    html`
      <h1>${title}</h1>
      <div class="box no">
        <p>${message}</p>
      </div>
    `,
  );
}
