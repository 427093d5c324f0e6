/**
 * Crash recovery, proven with real processes: the server runs as a child on a KV file, is killed
 * with SIGKILL in the middle of an audit, an article generation, a burst of credit-purchase
 * webhooks and a webhook retry, and a new process is started on the same file. Each job must
 * finish exactly once, no credit may be charged twice or lost, and every event must reach its
 * receiver under ONE delivery id (it may arrive twice: delivery is at-least-once).
 *
 * The children run with `JOB_LEASE_MS=1500` and maintenance every 300 ms under a 1.5 s leader
 * lease (`FAST_MAINTENANCE`), so the stale-job sweep hands a dead process's work to the new one
 * within seconds instead of the production 10–15 minutes.
 */
import { openTestKv } from "../helpers/kv.ts";
import assert from "node:assert/strict";
import { listLedger } from "../../domain/billing/credits.ts";
import type { LedgerEntry } from "../../domain/billing/types.ts";
import { keys } from "../../kv/keys.ts";
import type { DeliveryRecord } from "../../domain/webhooks/types.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import {
  type Received,
  type Receiver,
  startReceiver,
  verifySignature,
} from "../webhooks/helpers.ts";
import { startFakeOpenAI } from "../writing/fake_openai.ts";
import { KW, OUTLINE, scriptedModel } from "../writing/scripted_model.ts";
import {
  CHILD_POLL,
  FAST_MAINTENANCE,
  killAll,
  liveAccount,
  newProject,
  packPaidEvent,
  postStripe,
  type ServerProcess,
  startServer,
  tempKvPath,
  until,
} from "./process.ts";
import { quiet, waitForArticle, waitForAudit } from "../helpers/jobs.ts";

// ---------------------------------------------------------------------------------------------
// Shared checks

/** A gate that requests can wait on; `open()` lets them through (and is safe to call twice). */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

/** Reads the KV file directly (a third process on it, read-only use). */
async function withKv<T>(path: string, fn: (kv: Deno.Kv) => Promise<T>): Promise<T> {
  const kv = await openTestKv(path);
  try {
    return await fn(kv);
  } finally {
    kv.close();
  }
}

/**
 * The ledger is consistent: serial ids without gaps, each entry's balance follows from the one
 * before, the last matches the balance, and no grant or refund reference appears twice.
 */
function assertLedger(entries: LedgerEntry[], balance: number): void {
  let running = 0;
  const refs = new Set<string>();
  entries.forEach((e, i) => {
    assert.equal(e.id, `led_${String(i + 1).padStart(12, "0")}`, "ledger ids are serial");
    running += e.kind === "debit" ? -e.amount : e.amount;
    assert.equal(e.balanceAfter, running, `entry ${e.id} balance follows`);
    if (e.kind !== "debit") {
      const ref = `${e.kind}:${e.ref}`;
      assert.ok(!refs.has(ref), `${ref} applied once`);
      refs.add(ref);
    }
  });
  assert.equal(running, balance, "ledger sums to the balance");
}

async function balanceOf(server: ServerProcess, key: string): Promise<number> {
  const res = await server.req("GET", "/v1/credits", { key });
  assert.equal(res.status, 200, res.text);
  return res.body.balance_credits;
}

/** Registers a receiver for the account; returns the raw signing secret. */
async function registerHook(
  server: ServerProcess,
  key: string,
  receiver: Receiver,
  events: string[] = [],
): Promise<string> {
  const res = await server.req("POST", "/v1/webhooks", {
    key,
    body: { url: receiver.url, events },
  });
  assert.equal(res.status, 201, res.text);
  return res.body.secret;
}

/** Arrivals grouped by delivery id, each checked for a valid signature and a stable body. */
function byDelivery(received: Received[], secret: string, event: string): Map<string, Received[]> {
  const out = new Map<string, Received[]>();
  for (const r of received) {
    if (r.headers.get("x-serpwright-event") !== event) continue;
    assert.ok(
      verifySignature(secret, r.raw, r.headers.get("x-serpwright-signature")),
      "signature verifies",
    );
    const id = r.headers.get("x-serpwright-delivery")!;
    assert.equal(r.body.id, id, "envelope id is the delivery id");
    const same = out.get(id) ?? [];
    if (same.length) assert.equal(r.raw, same[0].raw, "a redelivery sends the same bytes");
    same.push(r);
    out.set(id, same);
  }
  return out;
}

/** Grants a 500-credit pack through a signed Stripe webhook. */
async function buyPack(server: ServerProcess, accountId: string): Promise<void> {
  const res = await postStripe(server, await packPaidEvent(server, accountId));
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.outcome, "credits_granted");
}

// ---------------------------------------------------------------------------------------------
// The model that writes the article after the restart

const HOST = "shoes.example";
const goodModel = scriptedModel({
  introLinks: `Start with our [home page](https://${HOST}/) before you buy.`,
  revision: { title: OUTLINE.title, markdown: `# ${OUTLINE.title}\n\nRevised text on ${KW}.\n` },
});

// ---------------------------------------------------------------------------------------------

Deno.test("crash mid-audit: a new process on the same KV finishes it once, charged once, one audit.completed", async () => {
  const kvFile = await tempKvPath();
  const hang = gate();
  let hanging = true;
  const site = serveSite((path) => {
    if (path !== "/") return undefined;
    const route = html(page({ title: "Home of the crash test site", links: [] }));
    if (!hanging) return route;
    return { handler: async () => (await hang.opened, new Response(route.body as string)) };
  });
  const receiver = startReceiver();
  let first: ServerProcess | null = null;
  let second: ServerProcess | null = null;
  try {
    first = await startServer(kvFile.path, FAST_MAINTENANCE);
    const { accountId, key } = await liveAccount(first);
    await buyPack(first, accountId);
    const secret = await registerHook(first, key, receiver, ["audit.completed"]);
    const projectId = await newProject(first, key, site.origin);
    const accepted = await first.req("POST", `/v1/projects/${projectId}/audits`, { key });
    assert.equal(accepted.status, 202, accepted.text);
    const auditId = accepted.body.audit_id as string;

    // The crawl reached the home page, which hangs: the audit is running. Kill the process.
    await until(() => Promise.resolve(site.hits.includes("/")), 15_000, "the crawl to start");
    const during = await first.req("GET", `/v1/audits/${auditId}`, { key });
    assert.equal(during.body.status, "running");
    await first.kill();
    hanging = false;
    hang.open();

    second = await startServer(kvFile.path, FAST_MAINTENANCE);
    const s = second;
    const done = await waitForAudit(s, key, auditId, { ...CHILD_POLL, timeoutMs: 30_000 });
    assert.equal(done.body.status, "completed", done.text);
    assert.ok(Number.isInteger(done.body.score));

    await receiver.waitFor(1, 15_000);
    await quiet(1_500);
    const deliveries = byDelivery(receiver.received, secret, "audit.completed");
    assert.equal(deliveries.size, 1, "one audit.completed delivery id");
    const [arrivals] = [...deliveries.values()];
    assert.equal(arrivals[0].body.data.project_id, projectId);

    // Charged once (25 of 500), never refunded; the project counts one audit.
    assert.equal(await balanceOf(s, key), 475);
    const project = await s.req("GET", `/v1/projects/${projectId}`, { key });
    assert.equal(project.body.counts.audits, 1);
    assert.equal(project.body.latest_audit.audit_id, auditId);
    await s.stop();
    await withKv(kvFile.path, async (kv) => {
      const ledger = await listLedger(kv, accountId);
      assert.deepEqual(ledger.map((e) => [e.kind, e.amount]), [["grant", 500], ["debit", 25]]);
      assertLedger(ledger, 475);
      const record = (await kv.get<{ attempts: number }>(keys.audit(accountId, auditId))).value!;
      assert.equal(record.attempts, 2, "started by the dead process, finished by the new one");
      const markers = await Array.fromAsync(kv.list({ prefix: keys.runningJobs() }));
      assert.equal(markers.length, 0, "no running-job marker left");
    });
  } catch (err) {
    console.error(`first:\n${first?.logs()}\nsecond:\n${second?.logs()}`);
    throw err;
  } finally {
    hang.open();
    await killAll(first, second);
    await receiver.close();
    await site.close();
    await kvFile.remove();
  }
});

Deno.test("crash mid-article: the new process writes it once, 15 credits taken once, slot released", async () => {
  const kvFile = await tempKvPath();
  const hang = gate();
  let hanging = true;
  const model = startFakeOpenAI((body) =>
    hanging ? { delayMs: 120_000, then: { status: 500 } } : goodModel(body)
  );
  let first: ServerProcess | null = null;
  let second: ServerProcess | null = null;
  const env = { ...FAST_MAINTENANCE, OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: model.baseURL };
  try {
    first = await startServer(kvFile.path, env);
    const { accountId, key } = await liveAccount(first);
    await buyPack(first, accountId);
    const projectId = await newProject(first, key, `https://${HOST}`);
    const path = `/v1/projects/${projectId}/articles`;
    const accepted = await first.req("POST", path, {
      key,
      body: { topic: OUTLINE.title, primary_keyword: KW },
    });
    assert.equal(accepted.status, 202, accepted.text);
    const articleId = accepted.body.article_id as string;

    // The model was asked for the outline and is thinking: the article is generating. Kill.
    await until(() => Promise.resolve(model.requests.length > 0), 15_000, "the model call");
    const during = await first.req("GET", `/v1/articles/${articleId}`, { key });
    assert.equal(during.body.status, "generating");
    await first.kill();
    hanging = false;
    hang.open();

    second = await startServer(kvFile.path, env);
    const s = second;
    // While the dead process's lease runs, the project still has an article in progress.
    const blocked = await s.req("POST", path, { key, body: { topic: "A second article" } });
    assert.equal(blocked.status, 409, blocked.text);
    const done = await waitForArticle(s, key, articleId, { ...CHILD_POLL, timeoutMs: 30_000 });
    assert.equal(done.body.status, "ready", done.text);
    assert.equal(done.body.title, OUTLINE.title);
    assert.ok(done.body.word_count > 0);

    assert.equal(await balanceOf(s, key), 485, "15 credits taken once");
    const project = await s.req("GET", `/v1/projects/${projectId}`, { key });
    assert.equal(project.body.counts.articles, 1);
    // The slot is free again.
    const next = await s.req("POST", path, { key, body: { topic: OUTLINE.title } });
    assert.equal(next.status, 202, next.text);
    await s.stop();
    await withKv(kvFile.path, async (kv) => {
      const ledger = await listLedger(kv, accountId);
      assert.deepEqual(ledger.map((e) => [e.kind, e.amount]), [
        ["grant", 500],
        ["debit", 15],
        ["debit", 15],
      ]);
      assertLedger(ledger, 470);
      const record = (await kv.get<{ attempts: number }>(keys.article(accountId, articleId)))
        .value!;
      assert.equal(record.attempts, 2);
    });
  } catch (err) {
    console.error(`first:\n${first?.logs()}\nsecond:\n${second?.logs()}`);
    throw err;
  } finally {
    hang.open();
    await killAll(first, second);
    await model.close();
    await kvFile.remove();
  }
});

Deno.test("crash amid credit-purchase webhooks: Stripe redelivers, each pack granted once, one credits.updated each", async () => {
  const kvFile = await tempKvPath();
  const receiver = startReceiver();
  let first: ServerProcess | null = null;
  let second: ServerProcess | null = null;
  const PACKS = 12;
  try {
    first = await startServer(kvFile.path, FAST_MAINTENANCE);
    const { accountId, key } = await liveAccount(first);
    const secret = await registerHook(first, key, receiver, ["credits.updated"]);
    const events = await Promise.all(
      Array.from({ length: PACKS }, () => packPaidEvent(first!, accountId)),
    );

    // Stripe sends them all at once; the process dies while they are in flight.
    const f = first;
    const inFlight = Promise.allSettled(events.map((e) => postStripe(f, e)));
    await quiet(40);
    await first.kill();
    const firstAnswers = await inFlight;
    const answered = firstAnswers.filter((a) => a.status === "fulfilled" && a.value.status === 200)
      .length;
    for (const a of firstAnswers) {
      if (a.status === "fulfilled") assert.ok(a.value.status < 500, a.value.text);
    }

    // Stripe retries every event that got no 2xx; we resend all of them (a stronger test).
    second = await startServer(kvFile.path, FAST_MAINTENANCE);
    const s = second;
    const redelivered = await Promise.all(events.map((e) => postStripe(s, e)));
    for (const r of redelivered) {
      assert.equal(r.status, 200, r.text);
      assert.ok(["credits_granted", "duplicate_event"].includes(r.body.outcome), r.text);
    }
    const appliedBeforeKill = redelivered.filter((r) =>
      r.body.outcome === "duplicate_event"
    ).length;
    assert.ok(appliedBeforeKill >= answered, "every 200 before the kill was a committed grant");
    const again = await Promise.all(events.map((e) => postStripe(s, e)));
    for (const r of again) assert.equal(r.body.outcome, "duplicate_event");

    assert.equal(await balanceOf(s, key), PACKS * 500, "every pack granted exactly once");

    // Every grant announced once: one delivery id per pack, balances 500, 1000, … in order.
    const deliveries = await until(
      () => {
        const d = byDelivery(receiver.received, secret, "credits.updated");
        return Promise.resolve(d.size >= PACKS ? d : null);
      },
      30_000,
      `${PACKS} credits.updated deliveries`,
    );
    await quiet(1_500);
    const final = byDelivery(receiver.received, secret, "credits.updated");
    assert.equal(final.size, PACKS, "no extra delivery id");
    const balances = [...deliveries.values()].map((a) => a[0].body.data.balance_credits as number)
      .sort((a, b) => a - b);
    assert.deepEqual(balances, events.map((_, i) => (i + 1) * 500));
    const repeats = receiver.received.length - final.size;
    console.log(
      `  ${answered}/${PACKS} answered 200 before the kill, ${appliedBeforeKill} applied before ` +
        `it; ${repeats} repeated deliveries`,
    );

    await s.stop();
    await withKv(kvFile.path, async (kv) => {
      const ledger = await listLedger(kv, accountId);
      assert.equal(ledger.length, PACKS);
      assert.deepEqual(
        new Set(ledger.map((e) => e.ref)),
        new Set(events.map((e) => e.data.object.id as string)),
      );
      assertLedger(ledger, PACKS * 500);
    });
  } catch (err) {
    console.error(`first:\n${first?.logs()}\nsecond:\n${second?.logs()}`);
    throw err;
  } finally {
    await killAll(first, second);
    await receiver.close();
    await kvFile.remove();
  }
});

Deno.test("crash mid-webhook-retry: during the backoff and during an attempt; one delivery id each, delivered", async () => {
  const kvFile = await tempKvPath();
  const hang = gate();
  // Script per delivery: event A fails its first attempt (500); event B's first attempt hangs
  // while its process is killed. Everything after that succeeds.
  const attempts = new Map<string, number>();
  let hangNext = false;
  let hungArrived = false;
  const receiver = startReceiver(async (r) => {
    const id = r.headers.get("x-serpwright-delivery")!;
    const n = (attempts.get(id) ?? 0) + 1;
    attempts.set(id, n);
    if (r.body.data.balance_credits === 500 && n === 1) return new Response("no", { status: 500 });
    if (hangNext && r.body.data.balance_credits === 1000) {
      hangNext = false;
      hungArrived = true;
      await hang.opened;
    }
    return new Response("ok");
  });
  const servers: ServerProcess[] = [];
  try {
    const env = { ...FAST_MAINTENANCE, WEBHOOK_RETRY_BASE_MS: "2000" };
    const first = await startServer(kvFile.path, env);
    servers.push(first);
    const { accountId, key } = await liveAccount(first);
    const secret = await registerHook(first, key, receiver, ["credits.updated"]);

    // A: first attempt answered 500; the process dies during the 2 s backoff.
    await buyPack(first, accountId);
    await until(() => Promise.resolve(receiver.received.length >= 1), 15_000, "attempt 1 of A");
    await quiet(100);
    await first.kill();
    const second = await startServer(kvFile.path, env);
    servers.push(second);
    const a = await until(
      () => {
        const d = byDelivery(receiver.received, secret, "credits.updated");
        const [arrivals] = [...d.values()];
        return Promise.resolve(arrivals?.length >= 2 ? d : null);
      },
      20_000,
      "the retry of A after the restart",
    );
    assert.equal(a.size, 1, "A keeps one delivery id across the crash");

    // B: the process dies while the receiver holds attempt 1.
    hangNext = true;
    await buyPack(second, accountId);
    await until(() => Promise.resolve(hungArrived), 15_000, "attempt 1 of B");
    await second.kill();
    hang.open();
    const third = await startServer(kvFile.path, env);
    servers.push(third);
    const both = await until(
      () => {
        const d = byDelivery(receiver.received, secret, "credits.updated");
        const b = [...d.values()].find((x) => x[0].body.data.balance_credits === 1000);
        return Promise.resolve(b && b.length >= 2 ? d : null);
      },
      20_000,
      "B to be sent again after the restart",
    );
    await quiet(1_500);
    const final = byDelivery(receiver.received, secret, "credits.updated");
    assert.equal(final.size, 2, "two events, two delivery ids");
    assert.equal(both.size, 2);

    await third.stop();
    await withKv(kvFile.path, async (kv) => {
      for (const id of final.keys()) {
        const d = (await kv.get<DeliveryRecord>(keys.delivery(id))).value!;
        assert.equal(d.state, "delivered", `${id} is recorded delivered`);
      }
      const ledger = await listLedger(kv, accountId);
      assertLedger(ledger, 1000);
    });
  } catch (err) {
    console.error(servers.map((s, i) => `server ${i}:\n${s.logs()}`).join("\n"));
    throw err;
  } finally {
    hang.open();
    await killAll(...servers);
    await receiver.close();
    await kvFile.remove();
  }
});
