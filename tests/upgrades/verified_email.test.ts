/**
 * Proving the account's email before paying (UPGRADE_REQUIRE_VERIFIED_EMAIL, on by default when
 * mail is configured): over HTTP with the real SMTP server on loopback (smtp-server, as the mail
 * tests use) and the fake Stripe. Also the variable's validation.
 */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../config.ts";
import { withApp } from "../helpers/app.ts";
import { linkIn, startSmtp } from "../helpers/smtp.ts";
import { freePort } from "../helpers/ports.ts";
import { startFakeStripe, stripeEnv } from "../billing/fake_stripe.ts";
import { newProject } from "../billing/helpers.ts";
import { completeCheckout, csrfIn, PageClient, paidLastSession, startUpgrade } from "./helpers.ts";

const FROM = "Serpwright <noreply@serpwright.test>";

Deno.test("with mail configured, the human proves the email from the received mail before paying, and comes back to pay", async () => {
  const smtp = await startSmtp();
  const fake = await startFakeStripe();
  const port = freePort();
  try {
    await withApp(async (app) => {
      const trial = await app.signup("owner@example.com");
      const projectId = await newProject(app, trial.key);
      const started = await startUpgrade(app, trial.key);
      const human = new PageClient(app.url);
      const entered = await human.submit(await human.get("/upgrade"), "/upgrade", {
        code: started.user_code,
      });
      const path = entered.headers.get("location")!;
      const choice = await human.get(path);
      assert.match(choice.text, /id="send-link"/);
      assert.match(choice.text, /id="pay" disabled/);
      assert.match(choice.text, /ow\*\*\*@example\.com|o\*\*\*@example\.com/);
      // Paying first is refused: the email is not proven.
      const early = await human.submit(choice, `${path}/checkout`, {
        [`fund_${projectId}`]: "pro",
      });
      assert.equal(early.status, 409);
      assert.match(early.text, /Confirm the account(&#39;|')s email first/);
      assert.equal(fake.sessionCreates().length, 0);

      // The link goes out through the job runtime to the real SMTP server.
      const sent = await human.submit(choice, `${path}/verify`);
      assert.equal(sent.status, 200, sent.text);
      assert.match(sent.text, /id="email-sent"/);
      const [mail] = await smtp.waitFor(1);
      assert.deepEqual(mail.rcptTo, ["owner@example.com"]);
      const link = new URL(linkIn(mail));
      const confirm = await human.get(link.pathname);
      assert.equal(confirm.status, 200, confirm.text);
      const csrf = /name="csrf"\s+value="([^"]+)"/.exec(confirm.text)![1];
      const confirmed = await human.post(link.pathname, { csrf });
      assert.equal(confirmed.status, 303, confirmed.text);
      assert.equal(new URL(confirmed.headers.get("location")!, app.url).pathname, path);

      // Back on the upgrade page: confirmed, and the payment opens.
      const back = await human.get(path);
      assert.match(back.text, /email is confirmed/);
      assert.doesNotMatch(back.text, /id="pay" disabled/);
      const leaving = await human.post(`${path}/checkout`, {
        csrf: csrfIn(back.text),
        [`fund_${projectId}`]: "pro",
      });
      assert.equal(leaving.status, 200, leaving.text);
      const url = /content="0;url=([^"]+)"/.exec(leaving.text)![1];
      const paid = await completeCheckout(app, paidLastSession(fake, url));
      assert.equal(paid.body.outcome, "upgraded");
      const claim = await app.req("GET", started.poll, { key: trial.key });
      assert.match(claim.body.api_key, /^sk_live_/);
      assert.equal(claim.body.plan, "pro");
      const account = await app.req("GET", "/v1/account", { key: claim.body.api_key });
      assert.equal(account.body.email_verified, true);
    }, {
      env: {
        ...stripeEnv(fake),
        PORT: String(port),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        SMTP_URL: smtp.url,
        MAIL_FROM: FROM,
        MAIL_RETRY_BASE_MS: "50",
      },
    });
  } finally {
    await fake.close();
    await smtp.close();
  }
});

Deno.test("without mail the page says so and the upgrade proceeds unverified", async () => {
  const fake = await startFakeStripe();
  try {
    await withApp(async (app) => {
      const trial = await app.signup();
      const started = await startUpgrade(app, trial.key);
      const human = new PageClient(app.url);
      const entered = await human.submit(await human.get("/upgrade"), "/upgrade", {
        code: started.user_code,
      });
      const choice = await human.get(entered.headers.get("location")!);
      assert.match(choice.text, /does not send mail/);
      assert.doesNotMatch(choice.text, /id="pay" disabled/);
      assert.match(choice.text, /id="no-projects"/);
    }, { env: stripeEnv(fake) });
  } finally {
    await fake.close();
  }
});

Deno.test("UPGRADE_REQUIRE_VERIFIED_EMAIL: default follows mail; on without mail stops the start; malformed names it", () => {
  const mail = { SMTP_URL: "smtp://u:p@mail.example:587", MAIL_FROM: FROM };
  assert.deepEqual(loadConfig({}).upgrades, { requireVerifiedEmail: false, mailConfigured: false });
  assert.deepEqual(loadConfig(mail).upgrades, { requireVerifiedEmail: true, mailConfigured: true });
  assert.equal(
    loadConfig({ ...mail, UPGRADE_REQUIRE_VERIFIED_EMAIL: "0" }).upgrades.requireVerifiedEmail,
    false,
  );
  for (
    const env of [{ UPGRADE_REQUIRE_VERIFIED_EMAIL: "1" }, {
      UPGRADE_REQUIRE_VERIFIED_EMAIL: "yes",
    }]
  ) {
    assert.throws(() => loadConfig(env), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.variable, "UPGRADE_REQUIRE_VERIFIED_EMAIL");
      return true;
    });
  }
});
