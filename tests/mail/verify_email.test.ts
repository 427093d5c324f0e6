/**
 * Email verification over HTTP against a real SMTP server on loopback (`smtp-server`, messages
 * read back with `mailparser`): the mail arrives with its link, the link's page confirms with a
 * POST, `GET /v1/account` then shows `email_verified: true`; a second use, an expired link and a
 * replaced one fail clearly; the rate limit answers 429 with Retry-After; a server that is down
 * makes the job retry until it is back; and no secret (the SMTP password, a link's token) is ever
 * stored, logged or listed.
 */
import assert from "node:assert/strict";
import { ConfigError, configNotices, loadConfig } from "../../config.ts";
import { runMailJob, sendVerificationLink } from "../../domain/mail/mod.ts";
import type { MailRecord } from "../../domain/mail/types.ts";
import type { Deps } from "../../domain/platform/deps.ts";
import { keys } from "../../kv/keys.ts";
import { errorCode, startTestApp, type TestApp } from "../helpers/app.ts";
import { pollUntil, quiet, truthy } from "../helpers/jobs.ts";
import { linkIn, SMTP_PASSWORD, SMTP_USER, startSmtp, type TestSmtp } from "../helpers/smtp.ts";
import { freePort } from "../helpers/ports.ts";
import { call, callError, connectMcp } from "../mcp/helpers.ts";

const FROM = "Serpwright <noreply@serpwright.test>";

/** The app on a known port, so `PUBLIC_BASE_URL` (the links' base) is its own address. */
function mailApp(smtp: TestSmtp | null, env: Record<string, string> = {}): Promise<TestApp> {
  const port = freePort();
  return startTestApp({
    env: {
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      ...(smtp ? { SMTP_URL: smtp.url, MAIL_FROM: FROM } : {}),
      MAIL_RETRY_BASE_MS: "50",
      ...env,
    },
  });
}

async function withMail(
  fn: (app: TestApp, smtp: TestSmtp) => Promise<void>,
  opts: { down?: boolean; env?: Record<string, string> } = {},
): Promise<void> {
  const smtp = await startSmtp({ down: opts.down });
  const app = await mailApp(smtp, opts.env);
  try {
    await fn(app, smtp);
  } finally {
    await app.close();
    await smtp.close();
  }
}

/** What the link's page gave: its answer, and the form's CSRF token and cookie. */
async function openLink(link: string) {
  const res = await fetch(link);
  const text = await res.text();
  const csrf = /name="csrf"\s+value="([^"]+)"/.exec(text)?.[1] ?? null;
  const cookie = res.headers.get("set-cookie")?.split(";")[0] ?? null;
  return { res, text, csrf, cookie };
}

/** Presses the page's button as a browser would: the form, its cookie, this site's Origin. */
async function confirm(link: string, opened: { csrf: string | null; cookie: string | null }) {
  const res = await fetch(link, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: new URL(link).origin,
      "sec-fetch-site": "same-origin",
      ...(opened.cookie ? { cookie: opened.cookie } : {}),
    },
    body: new URLSearchParams({ csrf: opened.csrf ?? "" }).toString(),
    redirect: "manual",
  });
  return { res, text: await res.text() };
}

async function mailRecord(app: TestApp, id: string): Promise<MailRecord | null> {
  return (await app.kv.get<MailRecord>(keys.mail(id))).value;
}

/** Every value in the store as text. */
async function storeText(kv: Deno.Kv): Promise<string> {
  const out: string[] = [];
  for await (const e of kv.list({ prefix: [] })) {
    out.push(
      JSON.stringify(e.key),
      JSON.stringify(e.value, (_k, v) => typeof v === "bigint" ? String(v) : v),
    );
  }
  return out.join("\n");
}

/** Collects what the service logs (console.log/warn/error) while `fn` runs. */
async function captureLogs(fn: () => Promise<void>): Promise<string> {
  const lines: string[] = [];
  const saved = { log: console.log, warn: console.warn, error: console.error };
  for (const name of ["log", "warn", "error"] as const) {
    console[name] = (...args: unknown[]) => {
      lines.push(args.map(String).join(" "));
    };
  }
  try {
    await fn();
  } finally {
    Object.assign(console, saved);
  }
  return lines.join("\n");
}

Deno.test("verify email: the mail arrives with its link, the page confirms, the account is verified, a second use fails", () =>
  withMail(async (app, smtp) => {
    const { key, accountId } = await app.signup("Jane.Doe@Example.com");
    const before = await app.req("GET", "/v1/account", { key });
    assert.equal(before.body.email_verified, false);

    const asked = await app.req("POST", "/v1/account/verify-email", { key });
    assert.equal(asked.status, 202, asked.text);
    assert.deepEqual(asked.body, {
      status: "sent",
      email: "j***@example.com",
      expires_at: new Date(app.clock.now() + 24 * 3_600_000).toISOString(),
    });

    const [mail] = await smtp.waitFor(1);
    assert.equal(mail.user, SMTP_USER, "authenticated with SMTP_URL's credentials");
    assert.deepEqual(mail.rcptTo, ["jane.doe@example.com"]);
    assert.match(mail.from, /noreply@serpwright\.test/);
    assert.equal(mail.subject, "Confirm your email address for Serpwright");
    assert.equal(mail.headers.get("auto-submitted"), "auto-generated");
    const link = linkIn(mail);
    assert.ok(link.startsWith(`${app.url}/verify-email/`), link);
    assert.ok(mail.html.includes(link), "the HTML part links it too");
    const token = link.slice(link.lastIndexOf("/") + 1);

    // Opening the link changes nothing: a mail scanner that fetches it uses nothing up.
    const opened = await openLink(link);
    assert.equal(opened.res.status, 200);
    const h = opened.res.headers;
    assert.match(h.get("content-security-policy") ?? "", /default-src 'none'/);
    assert.match(h.get("content-security-policy") ?? "", /form-action 'self'/);
    assert.match(h.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
    assert.doesNotMatch(h.get("content-security-policy") ?? "", /script-src|unsafe-inline/);
    assert.equal(h.get("x-frame-options"), "DENY");
    assert.equal(h.get("x-robots-tag"), "noindex, nofollow");
    assert.equal(h.get("referrer-policy"), "no-referrer");
    assert.equal(h.get("cache-control"), "private, no-store");
    assert.match(
      opened.text,
      /<meta name="viewport" content="width=device-width, initial-scale=1">/,
    );
    assert.match(opened.text, /<meta name="robots" content="noindex, nofollow">/);
    assert.match(opened.text, /j\*\*\*@example\.com/);
    assert.doesNotMatch(opened.text, /<script/i);
    assert.match(opened.cookie ?? "", /^sw_verify=/);
    assert.match(h.get("set-cookie") ?? "", /HttpOnly; SameSite=Strict/);
    assert.equal((await openLink(link)).res.status, 200, "opening twice is harmless");
    assert.equal((await app.req("GET", "/v1/account", { key })).body.email_verified, false);

    // A form without the cookie, with another token, or from another site is refused.
    const noCookie = await confirm(link, { csrf: opened.csrf, cookie: null });
    assert.equal(noCookie.res.status, 403);
    const wrong = await confirm(link, { csrf: "x".repeat(43), cookie: opened.cookie });
    assert.equal(wrong.res.status, 403);
    const foreign = await fetch(link, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: "https://evil.example",
        cookie: opened.cookie!,
      },
      body: `csrf=${opened.csrf}`,
    });
    assert.equal(foreign.status, 403);
    await foreign.body?.cancel();
    const crossSite = await fetch(link, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "sec-fetch-site": "cross-site",
        origin: "null",
        cookie: opened.cookie!,
      },
      body: `csrf=${opened.csrf}`,
    });
    assert.equal(crossSite.status, 403);
    await crossSite.body?.cancel();
    assert.equal((await app.req("GET", "/v1/account", { key })).body.email_verified, false);

    const done = await confirm(link, opened);
    assert.equal(done.res.status, 200, done.text);
    assert.match(done.text, /Email address verified/);
    assert.equal(done.res.headers.get("content-security-policy"), h.get("content-security-policy"));
    const after = await app.req("GET", "/v1/account", { key });
    assert.equal(after.status, 200);
    assert.equal(after.body.email_verified, true);

    // A second use fails clearly, by GET and by POST.
    const again = await openLink(link);
    assert.equal(again.res.status, 410);
    assert.match(again.text, /Link already used/);
    assert.equal(again.csrf, null, "no form on a used link");
    const twice = await confirm(link, opened);
    assert.equal(twice.res.status, 410);
    assert.match(twice.text, /Link already used/);
    // An unknown token.
    const unknown = await openLink(`${app.url}/verify-email/${"A".repeat(43)}`);
    assert.equal(unknown.res.status, 404);
    assert.match(unknown.text, /Link not found/);

    // Verified: asking again is 409 invalid_state.
    const verified = await app.req("POST", "/v1/account/verify-email", { key, body: {} });
    assert.equal(verified.status, 409);
    assert.equal(errorCode(verified), "invalid_state");

    // No secret at rest: not the token, not the SMTP password; the mail is recorded as sent.
    const stored = await storeText(app.kv);
    assert.ok(!stored.includes(token), "the raw token is not stored");
    assert.ok(!stored.includes(SMTP_PASSWORD), "the SMTP password is not stored");
    const mailId = [...stored.matchAll(/"(mail_[0-9a-z]+)"/g)][0]?.[1];
    assert.ok(mailId);
    const record = await mailRecord(app, mailId);
    assert.equal(record?.state, "sent");
    assert.equal(record?.attempts, 1);
    assert.equal(record?.accountId, accountId);
  }));

Deno.test("verify email: an expired link fails; an older link of a retried request is replaced", () =>
  withMail(async (app, smtp) => {
    const { key } = await app.signup();
    assert.equal((await app.req("POST", "/v1/account/verify-email", { key })).status, 202);
    const link = linkIn((await smtp.waitFor(1))[0]);
    const opened = await openLink(link);
    assert.equal(opened.res.status, 200);

    app.clock.advance(24 * 3_600_000 + 1);
    const late = await openLink(link);
    assert.equal(late.res.status, 410);
    assert.match(late.text, /Link expired/);
    const lateConfirm = await confirm(link, opened);
    assert.equal(lateConfirm.res.status, 410);
    assert.match(lateConfirm.text, /Link expired/);
    assert.equal((await app.req("GET", "/v1/account", { key })).body.email_verified, false);

    // A new request works; its first link answers "replaced" once a retry sent a newer one.
    assert.equal((await app.req("POST", "/v1/account/verify-email", { key })).status, 202);
    const first = linkIn((await smtp.waitFor(2))[1]);
    // The SMTP server acknowledged, but say the answer was lost: attempt 2 sends a new link.
    const records: MailRecord[] = [];
    for await (const e of app.kv.list<MailRecord>({ prefix: ["mail"] })) records.push(e.value);
    const latest = records.sort((a, b) => b.createdAt - a.createdAt)[0];
    await app.kv.set(keys.mail(latest.id), {
      ...latest,
      state: "pending",
      attempts: 1,
      sentAt: null,
      sending: null,
    });
    assert.equal(await runMailJob(app.service.services.deps, `${latest.id}:2`), "sent");
    const second = linkIn((await smtp.waitFor(3))[2]);
    assert.notEqual(second, first);
    const old = await openLink(first);
    assert.equal(old.res.status, 410);
    assert.match(old.text, /Link replaced/);
    const fresh = await openLink(second);
    assert.equal((await confirm(second, fresh)).res.status, 200);
    assert.equal((await app.req("GET", "/v1/account", { key })).body.email_verified, true);
  }));

Deno.test("verify email: 3 an hour per account, then 429 rate_limited with Retry-After; idempotent replays", () =>
  withMail(async (app, smtp) => {
    const { key } = await app.signup();
    const idem = crypto.randomUUID();
    const first = await app.req("POST", "/v1/account/verify-email", {
      key,
      headers: { "Idempotency-Key": idem },
    });
    assert.equal(first.status, 202);
    const replay = await app.req("POST", "/v1/account/verify-email", {
      key,
      headers: { "Idempotency-Key": idem },
    });
    assert.equal(replay.status, 202);
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(replay.body, first.body);

    app.clock.advance(60_000);
    assert.equal((await app.req("POST", "/v1/account/verify-email", { key })).status, 202);
    app.clock.advance(60_000);
    assert.equal((await app.req("POST", "/v1/account/verify-email", { key })).status, 202);
    const refused = await app.req("POST", "/v1/account/verify-email", { key });
    assert.equal(refused.status, 429);
    assert.equal(errorCode(refused), "rate_limited");
    // The first send leaves the hour 58 minutes from now.
    assert.equal(refused.headers.get("retry-after"), String(58 * 60));
    assert.ok(refused.headers.get("x-ratelimit-limit"), "the /v1 rate headers are still there");
    await smtp.waitFor(3);
    assert.equal(smtp.received.length, 3, "the replay and the refusal sent nothing");

    app.clock.advance(58 * 60_000);
    assert.equal((await app.req("POST", "/v1/account/verify-email", { key })).status, 202);
    await smtp.waitFor(4);
  }));

/** A server down at first: attempts fail and are retried until it is back, then the link works. */
function downThenUp(env: Record<string, string>) {
  return withMail(async (app, smtp) => {
    const { key } = await app.signup();
    let mailId = "";
    const logs = await captureLogs(async () => {
      const asked = await app.req("POST", "/v1/account/verify-email", { key });
      assert.equal(asked.status, 202, asked.text);
      for await (const e of app.kv.list<MailRecord>({ prefix: ["mail"] })) mailId = e.value.id;
      // Refused connections: attempts are recorded, with the reason, and retried.
      const failing = await pollUntil(
        async () => {
          const m = await mailRecord(app, mailId);
          return m && m.attempts >= 3 ? m : null;
        },
        truthy,
        { timeoutMs: 15_000, what: "three failed attempts" },
      );
      assert.equal(failing.state, "pending");
      assert.match(failing.lastError ?? "", /ECONNREFUSED|connect/i);
      assert.ok(failing.nextAttemptAt! > failing.lastAttemptAt!, "the next attempt is later");
      assert.equal(smtp.received.length, 0);

      await smtp.start();
      const [mail] = await smtp.waitFor(1);
      const done = await pollUntil(async () => {
        const m = await mailRecord(app, mailId);
        return m?.state === "sent" ? m : null;
      }, truthy);
      assert.ok(done.attempts >= 4);
      assert.equal(done.lastError, null);
      const link = linkIn(mail);
      assert.equal((await confirm(link, await openLink(link))).res.status, 200);
    });
    assert.match(logs, /mail attempt failed/);
    assert.ok(!logs.includes(SMTP_PASSWORD), "the SMTP password is never logged");
    assert.ok(!logs.includes(SMTP_USER + ":"), "nor the URL's credentials");
    assert.ok(!/verify-email\/[A-Za-z0-9_-]{43}/.test(logs), "nor a link");
    assert.equal((await app.req("GET", "/v1/account", { key })).body.email_verified, true);
  }, { down: true, env });
}

Deno.test("verify email: a down SMTP server makes the job retry with backoff until it is back; nothing secret is logged", () =>
  downThenUp({}));

Deno.test("verify email: the same retries on the KV job table (JOB_QUEUE=table)", () =>
  downThenUp({ JOB_QUEUE: "table" }));

Deno.test("verify email: the sweep re-sends a mail whose queue message was lost, after the grace period", () =>
  withMail(async (app, smtp) => {
    const { accountId, key } = await app.signup();
    // The request commits, but its first attempt's queue message is lost.
    const lossy: Deps = {
      ...app.service.services.deps,
      queue: { enqueue: () => Promise.resolve(), enqueueIn: () => {} },
    };
    const sent = await sendVerificationLink(lossy, { accountId });
    await app.service.tick();
    await quiet(200);
    assert.equal(smtp.received.length, 0, "not before the grace period");
    assert.equal((await mailRecord(app, sent.mailId))?.state, "pending");

    app.clock.advance(61_000);
    await app.service.tick();
    const link = linkIn((await smtp.waitFor(1))[0]);
    await pollUntil(async () => (await mailRecord(app, sent.mailId))?.state === "sent", truthy);
    assert.equal((await confirm(link, await openLink(link))).res.status, 200);
    assert.equal((await app.req("GET", "/v1/account", { key })).body.email_verified, true);
  }));

Deno.test("verify email: attempts are capped; a message that never goes out ends failed", () =>
  withMail(async (app) => {
    const { key } = await app.signup();
    await captureLogs(async () => {
      assert.equal((await app.req("POST", "/v1/account/verify-email", { key })).status, 202);
      let mailId = "";
      for await (const e of app.kv.list<MailRecord>({ prefix: ["mail"] })) mailId = e.value.id;
      const failed = await pollUntil(
        async () => {
          const m = await mailRecord(app, mailId);
          return m?.state === "failed" ? m : null;
        },
        truthy,
        { timeoutMs: 20_000, what: "the last attempt" },
      );
      assert.equal(failed.attempts, 8);
      assert.equal(failed.nextAttemptAt, null);
    });
  }, { down: true, env: { MAIL_RETRY_BASE_MS: "10" } }));

Deno.test("verify email: 503 mail_not_configured without SMTP_URL and MAIL_FROM, and a feature-off notice", async () => {
  const app = await mailApp(null);
  try {
    const { key } = await app.signup();
    const res = await app.req("POST", "/v1/account/verify-email", { key });
    assert.equal(res.status, 503);
    assert.equal(errorCode(res), "mail_not_configured");
    const mcp = await connectMcp(app, { key });
    try {
      const err = await callError(mcp, "account", { action: "verify_email" });
      assert.equal(err.code, "mail_not_configured");
    } finally {
      await mcp.close();
    }
  } finally {
    await app.close();
  }
  const notices = configNotices(loadConfig({ SMTP_URL: "smtp://127.0.0.1:25" }));
  assert.ok(notices.some((n) => n.startsWith("MAIL_FROM unset: no mail is sent")), notices.join());
  assert.ok(
    configNotices(loadConfig({})).some((n) => n.startsWith("SMTP_URL and MAIL_FROM unset")),
  );
  assert.ok(
    !configNotices(loadConfig({ SMTP_URL: "smtps://u:p@mail.example:465", MAIL_FROM: FROM }))
      .some((n) => n.includes("SMTP_URL")),
  );
});

Deno.test("verify email: a malformed SMTP_URL or MAIL_FROM stops the start, naming it, never echoing the password", () => {
  for (
    const bad of [
      "http://user:hunter2-secret@mail.example",
      "smtp://user:hunter2-secret@",
      "smtp://user:hunter2-secret@mail.example/path",
      "not a url hunter2-secret",
    ]
  ) {
    assert.throws(() => loadConfig({ SMTP_URL: bad }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.variable, "SMTP_URL");
      assert.ok(!err.message.includes("hunter2-secret"), err.message);
      return true;
    });
  }
  for (const bad of ["not-an-address", "A <b@c.d>\r\nBcc: x@y.z", "<a@b.c>", "a@b"]) {
    assert.throws(() => loadConfig({ MAIL_FROM: bad }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.variable, "MAIL_FROM");
      return true;
    });
  }
  const ok = loadConfig({ SMTP_URL: "smtps://u:p%40ss@mail.example:465", MAIL_FROM: FROM });
  assert.equal(ok.mail.smtpUrl, "smtps://u:p%40ss@mail.example:465");
  assert.equal(loadConfig({ MAIL_FROM: "ops@example.com" }).mail.from, "ops@example.com");
});

Deno.test("sendVerificationLink: returning to a page of the service after confirming; a return address off the site is refused", () =>
  withMail(async (app, smtp) => {
    const { key, accountId } = await app.signup();
    const deps = app.service.services.deps;
    await assert.rejects(
      sendVerificationLink(deps, { accountId, returnTo: "https://evil.example/after" }),
      (err: { code?: string }) => err.code === "invalid_request",
    );
    await assert.rejects(
      sendVerificationLink(deps, { accountId, returnTo: "//evil.example/after" }),
      (err: { code?: string }) => err.code === "invalid_request",
    );
    await assert.rejects(
      sendVerificationLink(deps, { accountId: "acct_nobody" }),
      (err: { code?: string }) => err.code === "not_found",
    );
    const sent = await sendVerificationLink(deps, { accountId, returnTo: "/pricing?upgrade=1" });
    assert.match(sent.maskedEmail, /^a\*\*\*@example\.com$/);
    assert.equal(sent.expiresAt, app.clock.now() + 24 * 3_600_000);
    const link = linkIn((await smtp.waitFor(1))[0]);
    const done = await confirm(link, await openLink(link));
    assert.equal(done.res.status, 303);
    assert.equal(done.res.headers.get("location"), `${app.url}/pricing?upgrade=1`);
    assert.equal((await app.req("GET", "/v1/account", { key })).body.email_verified, true);
  }));

Deno.test("verify email over MCP: the account tool's verify_email action sends the same link", () =>
  withMail(async (app, smtp) => {
    const { key } = await app.signup();
    const mcp = await connectMcp(app, { key });
    try {
      const got = await call(mcp, "account", {});
      assert.equal(got.email_verified, false, "action get is the default");
      const sent = await call(mcp, "account", { action: "verify_email" });
      assert.equal(sent.status, "sent");
      assert.match(sent.email, /^a\*\*\*@example\.com$/);
      const link = linkIn((await smtp.waitFor(1))[0]);
      assert.equal((await confirm(link, await openLink(link))).res.status, 200);
      const after = await call(mcp, "account", { action: "get" });
      assert.equal(after.email_verified, true);
    } finally {
      await mcp.close();
    }
  }));
