/**
 * `GET /pricing`: the pricing page, built from the one catalogue through `plansDocument`, the same
 * data `GET /v1/plans` serves. Each plan card carries the anchor its `checkout_url` points at.
 */
import { plansDocument } from "../../domain/billing/mod.ts";
import { html, layout, table } from "./layout.ts";

const usd = (n: number) => `$${n.toLocaleString("en-US")}`;

export function pricingPage(baseUrl: string): string {
  const doc = plansDocument(baseUrl);
  const b = baseUrl;
  const cards = doc.plans.map((p) =>
    html`
      <article class="card${p.featured ? " featured" : ""}" id="plan-${p.id}">
        <h3>${p.name}${p.featured ? html`<span class="badge">Most popular</span>` : ""}</h3>
        <p class="price">${usd(p.monthly_price)} <span class="muted">${p.currency} / project / ${p
          .period}</span></p>
        <ul>${p.features.map((f) => html`<li>${f}</li>`)}</ul>
        <a class="cta" href="${b}/upgrade">Choose ${p.name} for your project</a>
        <p class="muted">Plan id <code>${p.id}</code>. An agent opens the checkout with
      <code>POST /v1/subscriptions</code> <code>{"project_id": "…", "plan_id": "${p
        .id}"}</code>; a human
      pays at the returned <code>checkout_url</code>.</p>
      </article>
    `
  );
  const packs = table(
    ["Pack", "You pay", "Credits received", "Bonus"],
    doc.a_la_carte.credit_packs.map((p) => [
      html`<code>${p.id}</code>`,
      `${usd(p.usd)} ${doc.a_la_carte.currency}`,
      p.credits.toLocaleString("en-US"),
      p.bonus_credits > 0 ? `+${p.bonus_credits.toLocaleString("en-US")}` : "none",
    ]),
  );
  const items = table(
    ["Item", "Credits (= USD)"],
    doc.a_la_carte.items.map((i) => [
      html`<code>${i.id}</code> <span class="muted">per ${i.unit}: ${i.description}</span>`,
      String(i.usd_price),
    ]),
  );
  const body = html`
    <h1>Pricing</h1>
    <p>Billing is per project (one site). A subscription makes that project's audits and articles
    all-inclusive. Without one, live keys pay per unit from prepaid credits. Every price is in
    ${doc.currency}; the base platform fee is ${usd(doc.agent_channel.base_monthly_fee)}.</p>
    <div class="callout">
      <p><strong>Your agent sent you here?</strong> It holds a short upgrade code (or a link with
      it). Enter the code, confirm the account's email, choose a plan or credits for your project,
      and pay at Stripe; your agent then receives its live key by itself.</p>
      <a class="cta" href="${b}/upgrade">Upgrade an account with a code</a>
      <p class="muted">Already paying? Manage the card, invoices and cancellations in the billing
      portal your agent opens (<code>POST /v1/billing-portal</code>), or from the page you paid on.</p>
    </div>

    <h2 id="plans">Monthly plans</h2>
    <div class="cards">${cards}</div>

    <h2 id="scheduled-audits">Scheduled audits</h2>
    <p>A project can be audited on a schedule (<code>PUT /v1/projects/{projectId}/schedule</code>:
    daily, weekly or monthly at an hour in UTC), with an <code>audit.regressed</code> event when the
    score drops or new critical issues appear.</p>
    ${table(
      ["Funding of the project", "Most frequent schedule", "Each scheduled audit"],
      [
        ...doc.plans.map((p) => [
          `${p.name} plan`,
          p.scheduled_audits.max_cadence,
          "included",
        ]),
        [
          "Credits (live key, no subscription)",
          doc.a_la_carte.scheduled_audits.max_cadence,
          `${doc.a_la_carte.scheduled_audits.credits_per_audit} credits`,
        ],
        ["Sandbox key", "cannot schedule", "n/a"],
      ],
    )}
    <p class="muted">${doc.a_la_carte.scheduled_audits.note}</p>

    <h2 id="sandbox">Free sandbox</h2>
    <p>${doc.sandbox.note}</p>
    <ul>
      <li>${doc.sandbox.audits} technical audit and ${doc.sandbox
        .articles} draft articles per sandbox key</li>
      <li>Expires after ${doc.sandbox.expires_days} days; price ${usd(doc.sandbox.price)}</li>
      <li>Start: <code>${doc.sandbox.signup}</code> (see the <a href="${doc.links
        .for_agents}">agent quickstart</a>)</li>
    </ul>

    <h2 id="upgrade">Upgrading from the sandbox</h2>
    <p>An agent whose trial ran out (403 <code>sandbox_limit_reached</code>) or expired (401
    <code>key_expired</code>) starts an upgrade (<code>POST /v1/upgrades</code>) and gives you a
    code. <a href="${b}/upgrade" id="upgrade-link">Enter the code on the upgrade page</a>: you see the
    account and its project, choose a plan or credits, and pay once at Stripe. The project keeps its
    audits and articles, and the agent receives its live key (<code>sk_live_…</code>) by itself.
    Later purchases are checkouts the agent opens and you pay at their <code>checkout_url</code>;
    cards, invoices and cancellations are in Stripe's billing portal.
    ${doc.merchant_of_record}</p>
    <p>${doc.agent_channel.note}</p>

    <h2 id="credits">Credit packs</h2>
    <p>${doc.a_la_carte.note} ${doc.a_la_carte.payment}</p>
    ${packs}

    <h2 id="unit-prices">Unit prices</h2>
    ${items}

    <h2 id="article-pricing">Articles written without a model</h2>
    <p>${doc.article_pricing.rule} Every article says how it was written in its
    <code>generator</code> field (<code>kind</code> <code>model</code> or
    <code>builtin_outline</code>).</p>

    <h2 id="rendered-audits">Rendered audits</h2>
    <p>${doc.rendered_audit_pricing.rule}</p>

    <h2 id="rechecks">Re-checking a fix</h2>
    <p>${doc.recheck_pricing.rule}</p>

    <h2 id="machine-readable">Machine-readable</h2>
    <p>The same catalogue as JSON: <a href="${b}/v1/plans"><code>GET ${b}/v1/plans</code></a>
    (updated ${doc.updated_at.slice(0, 10)}).</p>
  `;
  return layout({
    baseUrl: b,
    path: "/pricing",
    title: "Pricing: Serpwright",
    description: `Serpwright pricing: ${
      doc.plans.map((p) => `${p.name} ${usd(p.monthly_price)}`).join(", ")
    } per project per month; prepaid credit packs; free sandbox.`,
    body,
  });
}
