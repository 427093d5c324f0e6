/**
 * The human's upgrade pages (routes/upgrades.ts serves them): type the code, see what is being
 * upgraded and what each choice costs, pay at Stripe, then the success page (reveal the live
 * key once, open the Billing Portal). Server-rendered forms, no script, one stylesheet allowed
 * by its hash, readable at a phone's width. They follow the report pages' rules: a strict
 * Content-Security-Policy (nothing but this stylesheet; forms post only to this server), never
 * framed, never indexed, no referrer, never stored. Every value goes through the `html` template's
 * escaping.
 *
 * @module
 */
import { type Html, html, raw } from "../html.ts";
import { privatePageHeaders } from "../private_page.ts";
import { CREDIT_PACKS, findPlan, isPurchasable, PLANS } from "../../domain/billing/mod.ts";
import type { Config } from "../../domain/platform/mod.ts";
import type { ProjectRecord } from "../../domain/projects/types.ts";

const STYLE = `
:root{color-scheme:light;--fg:#1b1f24;--bg:#fff;--muted:#57606a;--line:#d0d7de;--accent:#0b57d0;--soft:#f6f8fa;--good:#0a7a32;--warn:#8a5a00;--bad:#b42318}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);overflow-wrap:anywhere}
header{border-bottom:1px solid var(--line)}
header div,main,footer div{max-width:38rem;margin:0 auto;padding:.75rem 1rem}
.brand{font-weight:700;color:var(--fg);text-decoration:none}
main{padding-bottom:2rem}
h1{font-size:1.5rem;line-height:1.25;margin:.75rem 0 .75rem}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
p{margin:.5rem 0}
a{color:var(--accent)}
.box{background:var(--soft);border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;margin:.75rem 0}
.box.ok{border-color:var(--good)}
.box.warn{border-color:var(--warn)}
.box.error{border-color:var(--bad);color:var(--bad)}
.muted{color:var(--muted);font-size:.92rem}
label{font-weight:600}
input[type=text]{width:100%;font:1.4rem/1.2 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;letter-spacing:.12em;text-transform:uppercase;padding:.6rem .7rem;margin:.35rem 0;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg)}
fieldset{border:1px solid var(--line);border-radius:8px;margin:.75rem 0;padding:.5rem .75rem .75rem;min-width:0}
legend{font-weight:700;padding:0 .25rem}
.option{display:flex;gap:.6rem;align-items:flex-start;padding:.55rem .5rem;border-radius:6px;font-weight:400;cursor:pointer}
.option+.option{border-top:1px solid var(--line)}
.option input{margin:.3rem 0 0;flex:none;width:1.1rem;height:1.1rem}
.option span{flex:1}
.option small{display:block;color:var(--muted);font-size:.92rem}
.option.off{color:var(--muted);cursor:not-allowed}
button{font:inherit;font-weight:600;padding:.75rem 1rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;width:100%;margin-top:.75rem}
button.secondary{background:var(--bg);color:var(--accent)}
button:disabled{background:var(--soft);border-color:var(--line);color:var(--muted);cursor:not-allowed}
code,.key{font:.95em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--soft);padding:.05em .3em;border-radius:4px;word-break:break-all}
.key{display:block;padding:.75rem;font-size:1rem;border:1px solid var(--line)}
ul{padding-left:1.2rem}
li{margin:.2rem 0}
footer{border-top:1px solid var(--line);color:var(--muted);font-size:.9rem;margin-top:2rem}
`.trim();

/** The headers of every upgrade page (the report pages' rules; forms post to this server). */
export const UPGRADE_HEADERS = privatePageHeaders(STYLE, {
  formAction: "'self'",
  cache: "no-store",
});

const usd = (n: number) => `$${n.toLocaleString("en-US")}`;

/** One line per plan for the choice (the pricing page has the full lists). */
const PLAN_BLURB: Record<string, string> = {
  basic: "Audits and draft articles included; weekly scheduled audits.",
  pro: "Everything in Basic, 5× larger crawls, rendered audits, daily scheduled audits.",
};

/**
 * A whole page; `refresh` moves the browser on (a redirect without script: only ever with 0
 * seconds, since a delayed refresh takes the page away from someone still reading it).
 */
export function upgradeDocument(
  title: string,
  body: Html,
  refresh?: { seconds: number; url: string },
): string {
  return "<!DOCTYPE html>\n" + html`
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex, nofollow">
        <meta name="referrer" content="no-referrer">
        ${refresh
          ? html`<meta http-equiv="refresh" content="${`${refresh.seconds};url=${refresh.url}`}">`
          : ""}
        <title>${title}</title>
        <link rel="icon" href="data:,">
        <style>${raw(STYLE)}</style>
      </head>
      <body>
        <header>
          <div><a class="brand" href="/">Serpwright</a> <span class="muted">Upgrade</span></div>
        </header>
        <main>
    ${body}
        </main>
        <footer>
          <div>Payments are taken by Stripe, the merchant of record. Serpwright never sees
          your card.</div>
        </footer>
      </body>
    </html>
  `.value;
}

function errorBox(error: string | null): Html | string {
  return error
    ? html`
      <div class="box error" role="alert" id="error">
        <p>${error}</p>
      </div>
    `
    : "";
}

/** Step 1: the code the agent gave. */
export function codePage(o: { csrf: string; code: string; error: string | null }): string {
  return upgradeDocument(
    "Upgrade a Serpwright account",
    html`
      <h1>Upgrade a Serpwright account</h1>
      <p>An AI agent working for you used Serpwright's free trial and asked to continue on a paid
      plan. Enter the code it gave you.</p>
      ${errorBox(o.error)}
      <form method="post" action="/upgrade">
        <input type="hidden" name="csrf" value="${o.csrf}">
        <label for="code">Code from your agent</label>
        <input id="code" name="code" type="text" value="${o.code}" required maxlength="20"
          autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="XXXX-XXXX"
          aria-describedby="code-help">
        <p class="muted" id="code-help">8 letters and digits, like <code>KMTQ-7XWD</code>. Codes
        last 30 minutes.</p>
        <button type="submit" id="continue">Continue</button>
      </form>
      <p class="muted">Next you see which account and projects are upgraded and what each choice
      costs, before paying anything. Prices: <a href="/pricing">pricing</a>.</p>
    `,
  );
}

/** Where the account's email stands against the requirement to prove it before paying. */
export type EmailState =
  | { kind: "verified" }
  | { kind: "not_required"; mail: boolean }
  | { kind: "required"; sent: boolean };

export interface ChoicePageInput {
  csrf: string;
  upgradeId: string;
  maskedEmail: string;
  projects: ProjectRecord[];
  email: EmailState;
  config: Config;
  error: string | null;
  /** The choice to show selected (after an error), by form field. */
  selected: Record<string, string>;
}

/** One radio choice: a bold title and a line of detail under it. */
function option(o: {
  name: string;
  value: string;
  checked: boolean;
  enabled: boolean;
  title: string;
  detail: string;
}): Html {
  const attrs = raw(`${o.checked ? " checked" : ""}${o.enabled ? "" : " disabled"}`);
  const detail = o.enabled ? o.detail : `${o.detail} Not available on this server.`;
  return html`
    <label
      class="${o.enabled ? "option" : "option off"}"><input type="radio" name="${o
        .name}" value="${o.value}"${attrs}><span><b>${o
        .title}</b><small>${detail}</small></span></label>
  `;
}

/** Step 2: what is being upgraded, what each choice costs, and the way to pay. */
export function choicePage(o: ChoicePageInput): string {
  const blocked = o.email.kind === "required";
  const planOptions = (p: ProjectRecord) => {
    const name = `fund_${p.id}`;
    const chosen = o.selected[name] ?? "credits";
    const credits = option({
      name,
      value: "credits",
      checked: chosen === "credits",
      enabled: true,
      title: "Credits, no monthly fee",
      detail: "Each audit or article is paid from the credit balance.",
    });
    const plans = PLANS.map((plan) =>
      option({
        name,
        value: plan.id,
        checked: chosen === plan.id,
        enabled: isPurchasable(o.config, plan.id),
        title: `${plan.name}, ${usd(plan.monthlyPrice)} a month`,
        detail: PLAN_BLURB[plan.id] ?? "",
      })
    );
    return html`
      <fieldset>
        <legend>${p.name}</legend>
        <p class="muted">${p.url}</p>
        ${credits}${plans}
      </fieldset>
    `;
  };
  const chosenPack = o.selected.pack ?? "none";
  const packOptions = [
    option({
      name: "pack",
      value: "none",
      checked: chosenPack === "none",
      enabled: true,
      title: "None",
      detail: "No credits now.",
    }),
    ...CREDIT_PACKS.map((pack) =>
      option({
        name: "pack",
        value: pack.id,
        checked: chosenPack === pack.id,
        enabled: isPurchasable(o.config, pack.id),
        title: `${usd(pack.usd)} once`,
        detail: `${pack.credits.toLocaleString("en-US")} credits` +
          (pack.bonusCredits > 0
            ? `, ${pack.bonusCredits.toLocaleString("en-US")} of them bonus.`
            : "."),
      })
    ),
  ];
  const heading = o.projects.length === 1 ? "Your project" : "Your projects";
  const projects = o.projects.length === 0
    ? html`<p class="muted" id="no-projects">The trial has no project yet: a credit pack lets the
      agent create projects and pay per audit or article.</p>`
    : html`<p class="muted">${
      o.projects.length === 1
        ? "It leaves the trial with its audits and articles, and is paid for as you choose."
        : "Each leaves the trial with its audits and articles, paid for as you choose."
    }</p>${o.projects.map(planOptions)}`;
  const pay = blocked
    ? html`<button type="submit" id="pay" disabled aria-describedby="pay-blocked">Continue to
      payment</button><p class="muted" id="pay-blocked">Confirm the email above to continue.</p>`
    : html`<button type="submit" id="pay">Continue to payment</button>`;
  return upgradeDocument(
    "Choose your Serpwright plan",
    html`
      <h1>Choose what to pay for</h1>
      <div class="box" id="account">
        <p>You are upgrading the account <strong id="account-email">${o.maskedEmail}</strong> from
        its free trial. After payment, its agent gets a live API key.</p>
      </div>
      ${emailBox(o)}
      ${errorBox(o.error)}
      <form method="post" action="/upgrade/${o.upgradeId}/checkout">
        <input type="hidden" name="csrf" value="${o.csrf}">
        <h2>${heading}</h2>
        ${projects}
        <fieldset>
          <legend>Credit pack (optional)</legend>
          ${packOptions}
          <p class="muted">1 credit = 1 USD of list price: an audit costs 25 credits, an article
          15.</p>
        </fieldset>
        <p class="muted">Plans renew monthly until cancelled in the billing portal; a pack is paid
        once. You see the total at Stripe before you pay.</p>
        ${pay}
      </form>
    `,
  );
}

function emailBox(o: ChoicePageInput): Html | string {
  switch (o.email.kind) {
    case "verified":
      return html`<p class="muted" id="email-state">The account's email is confirmed.</p>`;
    case "not_required":
      return o.email.mail ? "" : html`
        <div class="box warn" id="email-state">
          <p>This server does not send mail, so the account's email cannot be confirmed. You can
              still upgrade; make sure the address above is one you know.</p>
        </div>
      `;
    case "required":
      return html`
        <div class="box warn" id="email-state">
          <p>First confirm that this is your account: we send a one-time link to
              <strong>${o.maskedEmail}</strong>. Open it, then come back to this page.</p>
          ${o.email.sent
            ? html`<p id="email-sent"><strong>Link sent.</strong> Check that inbox (and its spam
              folder; it can take a minute); the link brings you back here.</p>`
            : ""}
          <form method="post" action="/upgrade/${o.upgradeId}/verify">
            <input type="hidden" name="csrf" value="${o.csrf}">
            <button type="submit" class="secondary" id="send-link">${o.email.sent
              ? "Send the link again"
              : "Send the confirmation link"}</button>
          </form>
        </div>
      `;
  }
}

/** On the way to Stripe (Checkout or the Billing Portal): the browser follows at once. */
export function leavingPage(title: string, message: string, url: string): string {
  return upgradeDocument(
    title,
    html`
      <h1>${title}</h1>
      <p>${message}</p>
      <p><a href="${url}" id="go">Continue to Stripe</a></p>
    `,
    { seconds: 0, url },
  );
}

export interface DonePageInput {
  csrf: string;
  upgradeId: string;
  maskedEmail: string;
  status: "waiting" | "paid" | "claimed" | "expired";
  moved: ProjectRecord[];
  planName: string | null;
  planProject: string | null;
  creditsAdded: number;
  claimedAt: string | null;
  claimedBy: "agent" | "human" | null;
  message: string | null;
}

/** After Stripe: waiting for the payment's confirmation, then the result and what is next. */
export function donePage(o: DonePageInput): string {
  if (o.status === "waiting" || o.status === "expired") {
    const waiting = o.status === "waiting";
    return upgradeDocument(
      waiting ? "Confirming your payment" : "Upgrade not paid",
      html`
        <h1>${waiting ? "Confirming your payment…" : "This upgrade was not paid"}</h1>
        <p>${waiting
          ? "Stripe has not confirmed the payment to Serpwright yet; that usually takes a few " +
            "seconds. Your agent does not need this page: it gets its key as soon as the " +
            "payment is confirmed."
          : "Its time ran out before a payment arrived. Ask your agent for a new code."}</p>
        ${waiting
          ? html`<p><a href="/upgrade/${o.upgradeId}/done?wait=1" id="check-again">Check again</a></p>`
          : ""}
      `,
    );
  }
  return upgradeDocument(
    "Your Serpwright account is live",
    html`
      <h1>Your account is live</h1>
      <div class="box ok" id="result">
        <p>Payment received for <strong>${o.maskedEmail}</strong>. Thank you.</p>
        <ul>
          ${o.moved.map((p) =>
            html`<li><strong>${p.name}</strong> is now a live project${
              o.planProject === p.id ? html`, on the ${o.planName} plan` : ", paid with credits"
            }; its audits and articles are kept.</li>`
          )}
          ${o.creditsAdded > 0
            ? html`<li>${o.creditsAdded.toLocaleString("en-US")} credits are on the balance.</li>`
            : ""}
        </ul>
      </div>
      ${o.message
        ? html`
          <div class="box warn" role="alert">
            <p>${o.message}</p>
          </div>
        `
        : ""}
      <h2>The live API key</h2>
      ${o.status === "claimed"
        ? html`
          <p
            id="claimed">The live key was handed out once, ${o.claimedBy === "agent"
              ? "to your agent"
              : "on this page"}, on <time datetime="${o.claimedAt}">${readableTime(
                o.claimedAt,
              )}</time>. It is not shown again.</p>
        `
        : html`
          <p id="unclaimed">Your agent picks up its live key by itself within seconds. If it
              cannot (it stopped, or it is a tool you run by hand), reveal the key here instead:
              it is shown once, to whoever asks first.</p>
          <form method="post" action="/upgrade/${o.upgradeId}/reveal">
            <input type="hidden" name="csrf" value="${o.csrf}">
            <button type="submit" class="secondary" id="reveal">Show the live key here (once)</button>
          </form>
        `}
      <h2>Billing</h2>
      <p>Change the card, download invoices or cancel a plan in Stripe's billing portal.</p>
      <form method="post" action="/upgrade/${o.upgradeId}/portal">
        <input type="hidden" name="csrf" value="${o.csrf}">
        <button type="submit" class="secondary" id="portal">Manage billing</button>
      </form>
    `,
  );
}

/** The live key, revealed once. */
export function keyPage(o: { upgradeId: string; key: string }): string {
  return upgradeDocument(
    "Your live API key",
    html`
      <h1>Your live API key</h1>
      <div class="box warn">
        <p><strong>Copy it now: it is shown this once.</strong> Give it to your agent, or put it in
        your tool's settings; requests send it as <code>Authorization: Bearer sk_live_…</code></p>
      </div>
      <p><code class="key" id="live-key">${o.key}</code></p>
      <p class="muted">Lost it? A key holder can mint more (<code>POST /v1/api-keys</code>); without
      one, ask the operator.</p>
      <p><a href="/upgrade/${o.upgradeId}/done">Back</a></p>
    `,
  );
}

/** A page that says one thing (not found, expired form, too many tries, back from billing). */
export function noticePage(title: string, message: string, link?: { href: string; text: string }) {
  return upgradeDocument(
    title,
    html`
      <h1>${title}</h1>
      <p>${message}</p>
      ${link ? html`<p><a href="${link.href}">${link.text}</a></p>` : ""}
    `,
  );
}

/** `23 Nov 2026, 12:00 UTC`: a time a person reads (the ISO form stays in `datetime`). */
function readableTime(isoTime: string | null): string {
  if (!isoTime) return "";
  const date = new Date(isoTime).toLocaleDateString("en-GB", {
    day: "numeric",
    month: "short",
    year: "numeric",
    timeZone: "UTC",
  });
  return `${date}, ${isoTime.slice(11, 16)} UTC`;
}

/** The plan's display name. */
export function planName(id: string | null): string | null {
  return id ? findPlan(id)?.name ?? id : null;
}
