/**
 * The sign-in and consent page of `/oauth/authorize`: server-rendered HTML forms, no script, one
 * inline stylesheet, readable at a phone's width. Every value from a client (its name, its
 * redirect host) or a human (an email) is escaped by the `html` template.
 *
 * Three states: sign in (paste an API key, or sign up with an email for a sandbox account),
 * consent (who is signed in, what the app gets, approve or deny), and an error that cannot be
 * sent back to the app (unknown client, unregistered redirect URI, an expired or forged form).
 *
 * @module
 */
import { type Html, html, raw } from "../pages/layout.ts";

const STYLE = `
:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--muted:#57606a;--line:#d0d7de;--accent:#0b5fff;--warn:#9a6700;--bad:#cf222e;--box:#f6f8fa}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9aa4ae;--line:#30363d;--accent:#58a6ff;--warn:#d29922;--bad:#f85149;--box:#161b22}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);overflow-wrap:anywhere}
main{max-width:30rem;margin:0 auto;padding:1rem}
h1{font-size:1.4rem;line-height:1.25;margin:.5rem 0 1rem}
h2{font-size:1.05rem;margin:1.25rem 0 .5rem}
p{margin:.5rem 0}
.box{background:var(--box);border:1px solid var(--line);border-radius:8px;padding:.75rem;margin:.75rem 0}
.warn{border-color:var(--warn)}
.error{border-color:var(--bad);color:var(--bad)}
.muted{color:var(--muted);font-size:.9rem}
label{display:block;font-weight:600;margin:.5rem 0 .25rem}
input[type=email],input[type=password],input[type=text]{width:100%;font:inherit;padding:.6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg)}
button{font:inherit;font-weight:600;padding:.65rem 1rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;width:100%;margin-top:.6rem}
button.secondary{background:transparent;color:var(--fg);border-color:var(--line)}
code{font:.85em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--box);padding:.1em .3em;border-radius:4px;word-break:break-all}
code.path{word-break:normal;white-space:nowrap}
ul{padding-left:1.2rem}
`.trim();

/** The facts of the request the page shows. */
export interface RequestView {
  /** The sealed request (domain/identity/oauth/ticket.ts), posted back by every form. */
  request: string;
  csrf: string;
  clientName: string;
  /** The client id when it is a metadata document URL (its host is who vouches for the name). */
  clientDocHost: string | null;
  redirectHost: string;
  loopback: boolean;
}

/** The account a signed-in human approves for. */
export interface SignedIn {
  email: string;
  mode: "sandbox" | "live";
  keyLast4: string;
  /** A key created by signing up here, shown once. */
  newKey: string | null;
}

function shell(title: string, body: Html): string {
  return "<!DOCTYPE html>\n" + html`
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>${title}</title>
        <link rel="icon" href="data:,">
        <style>${raw(STYLE)}</style>
      </head>
      <body>
        <main>
          <p class="muted">Serpwright</p>
    ${body}
        </main>
      </body>
    </html>
  `.value;
}

function hidden(v: RequestView, action: string): Html {
  return html`
    <input type="hidden" name="request" value="${v.request}"><input type="hidden" name="csrf"
      value="${v.csrf}"><input type="hidden" name="action" value="${action}">
  `;
}

function who(v: RequestView): Html {
  return html`
    <div class="box" id="client">
      <p><strong id="client-name">${v.clientName}</strong> wants to use Serpwright on your behalf
      through MCP.</p>
      ${v.clientDocHost
        ? html`<p class="muted">Its description is published by <strong>${v.clientDocHost}</strong>.</p>`
        : html`<p class="muted">It registered itself: its name is not verified.</p>`}
      <p>After you answer, this browser goes back to <strong id="redirect-host">${v
        .redirectHost}</strong>.</p>
    </div>
    ${v.loopback
      ? html`
        <div class="box warn" id="loopback-warning">
          <p>That address is on your own computer.
              Only continue if you just started this from an app running on this device.</p>
        </div>
      `
      : ""}
  `;
}

function denyForm(v: RequestView): Html {
  return html`
    <form method="post" action="/oauth/authorize">
      ${hidden(v, "deny")}
      <button type="submit" class="secondary" id="deny">Cancel and deny access</button>
    </form>
  `;
}

/** Step 1: sign in with an API key, or sign up. `error` is shown above the forms. */
export function signInPage(v: RequestView, error: string | null): string {
  return shell(
    `Connect ${v.clientName} to Serpwright`,
    html`
      <h1>Connect ${v.clientName} to Serpwright</h1>
      ${who(v)}
      ${error
        ? html`
          <div class="box error" role="alert" id="error">
            <p>${error}</p>
          </div>
        `
        : ""}
      <h2>Sign in with an API key</h2>
      <form method="post" action="/oauth/authorize">
        ${hidden(v, "key")}
        <label for="api_key">API key</label>
        <input id="api_key" name="api_key" type="password" autocomplete="off" spellcheck="false"
          placeholder="sk_sandbox_… or sk_live_…" required maxlength="100">
        <button type="submit" id="sign-in">Continue</button>
      </form>
      <h2>New to Serpwright?</h2>
      <p class="muted">Create a sandbox account with your email: a free trial, no card.</p>
      <form method="post" action="/oauth/authorize">
        ${hidden(v, "signup")}
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="email" required maxlength="320">
        <button type="submit" id="sign-up">Create a sandbox account</button>
      </form>
      ${denyForm(v)}
    `,
  );
}

/**
 * Step 2: who is signed in, what the app gets; approve or deny. `full` (the account's cap of
 * connected apps is reached) replaces the approve button with why.
 */
export function consentPage(v: RequestView, s: SignedIn, full: string | null = null): string {
  const sandbox = s.mode === "sandbox";
  return shell(
    `Allow ${v.clientName}?`,
    html`
      <h1>Allow ${v.clientName} to use your account?</h1>
      ${who(v)}
      <div class="box" id="account">
        <p>Signed in as <strong id="account-email">${s.email}</strong> with a
        <strong id="account-mode">${s.mode}</strong> key ending in <code>${s.keyLast4}</code>.</p>
        ${s.newKey
          ? html`
            <p>Your account was created. Its sandbox API key, shown once (keep it to use the
                    HTTP API or to sign in again):</p>
            <p><code id="new-key">${s.newKey}</code></p>
          `
          : ""}
      </div>
      <p>Over MCP, on this key's behalf, ${v.clientName} can:</p>
      <ul id="can">
        <li>read the account;</li>
        <li>create and read projects, audits, re-checks, articles and reports;</li>
        <li>create share links (they end when its access ends);</li>
        <li>start checkouts, which a human must pay;</li>
        <li>delete schedules.</li>
      </ul>
      <p>It cannot:</p>
      <ul id="cannot">
        <li>create or revoke API keys, or revoke other connected apps;</li>
        <li>create or delete webhook endpoints;</li>
        <li>set audit schedules;</li>
        <li>open the billing portal or start an upgrade.</li>
      </ul>
      ${sandbox
        ? html`<p class="muted">A sandbox key gives sandbox access only.</p>`
        : html`<p class="muted">This is a live key: the app gets live access and may spend credits.</p>`}
      <p class="muted" id="ends">Access ends when you revoke the app
      (<code class="path">DELETE /v1/connected-apps/{id}</code>) or when this key is revoked or
      expires.</p>
      ${full
        ? html`
          <div class="box error" role="alert" id="error">
            <p>${full}.</p>
          </div>
        `
        : html`
          <form method="post" action="/oauth/authorize">
            ${hidden(v, "approve")}
            <button type="submit" id="approve">Allow access</button>
          </form>
        `}
      ${denyForm(v)}
    `,
  );
}

/**
 * A dead end: the request cannot continue and nothing is sent to the app. `note` says why the
 * error is shown here rather than sent back (an app no approval has used yet).
 */
export function errorPage(code: string, description: string, note?: string): string {
  return shell(
    "Sign-in cannot continue",
    html`
      <h1>This sign-in cannot continue</h1>
      <div class="box error" role="alert">
        <p><code id="error-code">${code}</code></p>
        <p id="error-description">${description}</p>
      </div>
      ${note ? html`<p id="error-note">${note}</p>` : ""}
      <p>Nothing was shared with the app. Start again from the app you were connecting.</p>
    `,
  );
}
