/**
 * A complete Serpwright agent client, using `fetch` only: signup, project, audit, article, and a
 * webhook whose delivery signature it verifies. It follows /docs/agents step by step.
 *
 * ```sh
 * deno task dev    # in another terminal
 * deno run -A examples/agent.ts --base http://localhost:8000 --site https://example.com --webhook-port 8787
 * ```
 *
 * Flags: `--base URL` (default http://localhost:8000), `--email ADDRESS` (default a fresh one),
 * `--site URL` (default https://example.com), `--webhook-port N` (start a receiver on 127.0.0.1:N
 * and register it; a local server accepts it because `.env.dev` allows private targets),
 * `--audit-poll S` (default 30) and `--article-poll S` (default 60) seconds.
 *
 * @module
 */

/** A non-2xx answer in the service's error shape. Branch on `code`. */
export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly docUrl: string | null,
    readonly body: unknown,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = "ServiceError";
  }
}

export interface Delivery {
  headers: Headers;
  rawBody: string;
}

export interface AgentFlowOptions {
  baseUrl: string;
  email: string;
  /** The site to register. Default `https://example.com`. */
  siteUrl?: string;
  /** Where the service should deliver events; registered before the audit starts. */
  webhookUrl?: string;
  /**
   * Resolves with the next delivery that arrived at `webhookUrl` (its headers and raw body), for
   * the signature check. Without it the webhook is registered but not verified.
   */
  receiveDelivery?: (timeoutMs: number) => Promise<Delivery>;
  /** The receiver's clock for the signature's timestamp check (ms). Default `Date.now`. */
  now?: () => number;
  /** Seconds between audit polls (30 to 60 recommended). Default 30. */
  auditPollSeconds?: number;
  /** Seconds between article polls (60 recommended). Default 60. */
  articlePollSeconds?: number;
  /** Give up polling after this many seconds. Default 3600. */
  maxWaitSeconds?: number;
  topic?: string;
  primaryKeyword?: string;
  log?: (line: string) => void;
  /** Injected for tests; defaults to the global fetch. */
  fetch?: typeof fetch;
}

export interface AgentFlowResult {
  accountId: string;
  keyLast4: string;
  projectId: string;
  audit: { id: string; status: string; score: number | null; criticalIssues: number | null };
  /** The worst issue of the audit: what to fix, and where (its affected URLs with evidence). */
  topIssue: null | {
    check: string;
    title: string;
    fix: string;
    docUrl: string;
    affectedCount: number;
    urls: string[];
  };
  article: { id: string; status: string; title: string | null; wordCount: number | null };
  webhook: null | {
    id: string;
    verified: boolean | null;
    event: string | null;
    deliveryId: string | null;
  };
  upgradeUrl: string;
}

// deno-lint-ignore no-explicit-any
type Json = any;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether `given` (hex) is the HMAC-SHA256 of `data` keyed with the secret's text. */
async function hmacMatches(secret: string, data: Uint8Array, given: string): Promise<boolean> {
  if (!/^[0-9a-f]{64}$/i.test(given)) return false;
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, data as BufferSource));
  const expected = Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
  const lower = given.toLowerCase();
  // Constant time: every character is compared whatever the first difference.
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ lower.charCodeAt(i);
  return diff === 0;
}

const bytes = (raw: string | Uint8Array) =>
  typeof raw === "string" ? new TextEncoder().encode(raw) : raw;

/**
 * The v1 signature (`X-Serpwright-Signature`): the hex HMAC-SHA256 of the raw body. Kept for
 * receivers written before v2; it does not stop a captured delivery being replayed.
 */
export async function verifySignature(
  secret: string,
  rawBody: string | Uint8Array,
  header: string | null,
): Promise<boolean> {
  return header !== null && await hmacMatches(secret, bytes(rawBody), header);
}

/** How far from the receiver's clock a v2 timestamp is accepted (docs/webhooks.md). */
export const SIGNATURE_TOLERANCE_S = 300;

/**
 * The v2 signature, the one to verify: `X-Serpwright-Signature-V2` is `v2=` and the hex
 * HMAC-SHA256 of `{X-Serpwright-Delivery}.{X-Serpwright-Timestamp}.{raw body}`, and the timestamp
 * must be within 300 seconds of `nowMs`. A delivery replayed later, or under another id, fails.
 */
export async function verifyDelivery(
  secret: string,
  rawBody: string | Uint8Array,
  headers: Headers,
  nowMs = Date.now(),
): Promise<boolean> {
  const sig = /^v2=([0-9a-f]{64})$/i.exec(headers.get("X-Serpwright-Signature-V2") ?? "")?.[1];
  const id = headers.get("X-Serpwright-Delivery");
  const ts = headers.get("X-Serpwright-Timestamp") ?? "";
  if (!sig || !id || !/^\d{1,12}$/.test(ts)) return false;
  if (Math.abs(nowMs / 1000 - Number(ts)) > SIGNATURE_TOLERANCE_S) return false;
  const head = new TextEncoder().encode(`${id}.${ts}.`);
  const body = bytes(rawBody);
  const data = new Uint8Array(head.length + body.length);
  data.set(head);
  data.set(body, head.length);
  return await hmacMatches(secret, data, sig);
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  /** Sent on creating POSTs; reused on every retry of the same call. */
  idempotencyKey?: string;
  /** Retries for 429 and 500 (default 5). */
  retries?: number;
  fetch?: typeof fetch;
  log?: (line: string) => void;
}

/**
 * One API call with the retries the service asks for: on 429 `rate_limited` it waits
 * `Retry-After` seconds; on 500 `internal_error` (and a network failure) it retries with the same
 * Idempotency-Key after a short backoff. Any other error is thrown as a `ServiceError`.
 */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  o: CallOptions = {},
): Promise<Json> {
  const f = o.fetch ?? fetch;
  const retries = o.retries ?? 5;
  const headers: Record<string, string> = { accept: "application/json" };
  if (o.key) headers.authorization = `Bearer ${o.key}`;
  if (o.idempotencyKey) headers["Idempotency-Key"] = o.idempotencyKey;
  if (o.body !== undefined) headers["content-type"] = "application/json";
  for (let attempt = 0;; attempt++) {
    let res: Response;
    try {
      res = await f(baseUrl + path, {
        method,
        headers,
        body: o.body === undefined ? undefined : JSON.stringify(o.body),
      });
    } catch (err) {
      if (attempt >= retries) throw err;
      o.log?.(`  network error on ${method} ${path}; retrying`);
      await sleep(Math.min(250 * 2 ** attempt, 5_000));
      continue;
    }
    const text = await res.text();
    let body: Json = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    if (res.ok) return body;
    const code: string = body?.error?.code ?? `http_${res.status}`;
    const message: string = body?.error?.message ?? text.slice(0, 200);
    if (code === "rate_limited" && attempt < retries) {
      const wait = Math.max(0, Number(res.headers.get("retry-after") ?? "1"));
      o.log?.(`  rate limited on ${method} ${path}; waiting ${wait} s (Retry-After)`);
      await sleep(wait * 1000);
      continue;
    }
    if (code === "internal_error" && attempt < retries) {
      o.log?.(`  internal_error on ${method} ${path}; retrying with the same Idempotency-Key`);
      await sleep(Math.min(500 * 2 ** attempt, 10_000));
      continue;
    }
    throw new ServiceError(res.status, code, message, body?.error?.doc_url ?? null, body);
  }
}

/** Polls `path` every `intervalS` seconds until its `status` is one of `done`. */
async function pollUntil(
  get: () => Promise<Json>,
  done: string[],
  intervalS: number,
  maxWaitS: number,
  label: string,
  log: (line: string) => void,
): Promise<Json> {
  const deadline = Date.now() + maxWaitS * 1000;
  let last = "";
  while (true) {
    const r = await get();
    if (r.status !== last) {
      log(`  ${label}: ${r.status}`);
      last = r.status;
    }
    if (done.includes(r.status)) return r;
    if (Date.now() > deadline) throw new Error(`${label} still ${r.status} after ${maxWaitS} s`);
    await sleep(intervalS * 1000);
  }
}

/** Walks the whole agent flow against a running server and returns what it got. */
export async function runAgentFlow(o: AgentFlowOptions): Promise<AgentFlowResult> {
  const log = o.log ?? console.log;
  const base = o.baseUrl.replace(/\/+$/, "");
  const run = crypto.randomUUID();
  const common = { fetch: o.fetch, log };
  const api = (method: string, path: string, extra: CallOptions = {}) =>
    call(base, method, path, { ...common, ...extra });

  // 1. Signup (public). The key is shown once; the Idempotency-Key makes a retry replay it.
  log(`1. Signing up ${o.email}`);
  let signup: Json;
  try {
    signup = await api("POST", "/v1/accounts", {
      body: { email: o.email, origin: "agent" },
      idempotencyKey: `signup-${run}`,
    });
  } catch (err) {
    if (err instanceof ServiceError && err.code === "account_exists") {
      throw new Error(
        `${o.email} is already registered: use that account's key or another email`,
      );
    }
    throw err;
  }
  const key: string = signup.api_key;
  log(`   account ${signup.account_id}, ${signup.mode} key …${key.slice(-4)}`);

  // 2. Webhook first, so this run's audit.completed is delivered to it.
  let webhook: AgentFlowResult["webhook"] = null;
  let secret: string | null = null;
  if (o.webhookUrl) {
    log(`2. Registering webhook ${o.webhookUrl}`);
    const wh = await api("POST", "/v1/webhooks", {
      key,
      body: { url: o.webhookUrl, events: ["audit.completed", "article.published"] },
    });
    secret = wh.secret;
    webhook = { id: wh.webhook_id, verified: null, event: null, deliveryId: null };
    log(`   ${wh.webhook_id}; signature header ${wh.signature_header}`);
  }

  // 3. Project.
  const siteUrl = o.siteUrl ?? "https://example.com";
  log(`3. Creating a project for ${siteUrl}`);
  const project = await api("POST", "/v1/projects", {
    key,
    body: { url: siteUrl },
    idempotencyKey: `project-${run}`,
  });
  log(`   ${project.project_id} (${project.url}, access ${project.access})`);

  // 4. Audit, polled at the recommended interval.
  log("4. Starting a technical audit");
  let auditStart: Json;
  try {
    auditStart = await api("POST", `/v1/projects/${project.project_id}/audits`, {
      key,
      idempotencyKey: `audit-${run}`,
    });
  } catch (err) {
    throw explain(err, signup.upgrade_url);
  }
  let topIssue: AgentFlowResult["topIssue"] = null;
  const audit = await pollUntil(
    () => api("GET", auditStart.poll, { key }),
    ["completed", "failed"],
    o.auditPollSeconds ?? 30,
    o.maxWaitSeconds ?? 3600,
    `audit ${auditStart.audit_id}`,
    log,
  );
  if (audit.status === "completed") {
    log(
      `   score ${audit.score}/100; ${audit.summary.issues_critical} critical, ` +
        `${audit.summary.issues_warning} warnings, ${audit.summary.issues_info} info`,
    );
    for (const t of audit.summary.top_issues.slice(0, 3)) {
      log(`   - [${t.severity}] ${t.title} (${t.affected_count})`);
    }
    // What to fix first: the worst issue, its fix, and the URLs it affects (with evidence).
    const issues = await api("GET", `/v1/audits/${audit.audit_id}/issues?limit=1`, { key });
    const worst = issues.data[0];
    if (worst) {
      const urls: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Json = await api(
          "GET",
          `${worst.items_url}?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
          { key },
        );
        for (const item of page.data) {
          const extra = Object.entries(item).filter(([k]) => k !== "url")
            .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") : v}`).join(" ");
          urls.push(item.url);
          if (urls.length <= 10) log(`     ${item.url}${extra ? `  (${extra})` : ""}`);
        }
        cursor = page.next_cursor;
      } while (cursor && urls.length < 1000);
      log(`   top issue: ${worst.check} (${worst.change}), ${worst.affected_count} affected`);
      log(`   fix: ${worst.fix}`);
      log(`   more: ${worst.doc_url}`);
      topIssue = {
        check: worst.check,
        title: worst.title,
        fix: worst.fix,
        docUrl: worst.doc_url,
        affectedCount: worst.affected_count,
        urls,
      };
    }
  } else {
    log(`   audit failed: ${JSON.stringify(audit.error ?? null)}`);
  }

  // 5. Article, polled at the recommended interval.
  const topic = o.topic ?? "How to choose running shoes for flat feet";
  log(`5. Generating a draft article: ${topic}`);
  let articleStart: Json;
  try {
    articleStart = await api("POST", `/v1/projects/${project.project_id}/articles`, {
      key,
      body: { topic, ...(o.primaryKeyword ? { primary_keyword: o.primaryKeyword } : {}) },
      idempotencyKey: `article-${run}`,
    });
  } catch (err) {
    throw explain(err, signup.upgrade_url);
  }
  const article = await pollUntil(
    () => api("GET", articleStart.poll, { key }),
    ["ready", "failed", "published"],
    o.articlePollSeconds ?? 60,
    o.maxWaitSeconds ?? 3600,
    `article ${articleStart.article_id}`,
    log,
  );
  if (article.status === "ready" || article.status === "published") {
    log(`   "${article.title}": ${article.word_count} words, QA ${article.qa_score}`);
    if (article.watermark) log(`   note: ${article.watermark.note}`);
  }

  // 6. Verify a received delivery's signature before trusting it.
  if (webhook && secret && o.receiveDelivery) {
    log("6. Waiting for a webhook delivery");
    const d = await o.receiveDelivery(60_000);
    webhook.verified = await verifyDelivery(secret, d.rawBody, d.headers, (o.now ?? Date.now)());
    webhook.event = d.headers.get("X-Serpwright-Event");
    webhook.deliveryId = d.headers.get("X-Serpwright-Delivery");
    log(
      `   ${webhook.event} delivery ${webhook.deliveryId}: signature ` +
        (webhook.verified ? "verified" : "INVALID (ignore this delivery)"),
    );
  }

  const result: AgentFlowResult = {
    accountId: signup.account_id,
    keyLast4: key.slice(-4),
    projectId: project.project_id,
    audit: {
      id: audit.audit_id,
      status: audit.status,
      score: audit.score ?? null,
      criticalIssues: audit.summary?.issues_critical ?? null,
    },
    topIssue,
    article: {
      id: article.article_id,
      status: article.status,
      title: article.title ?? null,
      wordCount: article.word_count ?? null,
    },
    webhook,
    upgradeUrl: signup.upgrade_url,
  };
  log("");
  log("Summary");
  log(`  account   ${result.accountId} (key …${result.keyLast4})`);
  log(`  project   ${result.projectId} ${siteUrl}`);
  log(`  audit     ${result.audit.id} ${result.audit.status} score ${result.audit.score}`);
  if (result.topIssue) {
    log(
      `  top issue ${result.topIssue.check}: ${result.topIssue.urls.length} URLs; fix: ` +
        result.topIssue.fix,
    );
  }
  log(`  article   ${result.article.id} ${result.article.status} "${result.article.title}"`);
  if (webhook) {
    log(`  webhook   ${webhook.id} ${webhook.event ?? "-"} verified ${webhook.verified}`);
  }
  log(`  upgrade   ${result.upgradeUrl}`);
  return result;
}

/** Turns the errors an agent can act on into instructions. */
function explain(err: unknown, upgradeUrl: string): unknown {
  if (!(err instanceof ServiceError)) return err;
  switch (err.code) {
    case "sandbox_limit_reached":
    case "key_expired":
    case "payment_required":
      return new Error(`${err.message}. Ask a human to upgrade at ${upgradeUrl}`, { cause: err });
    case "insufficient_credits":
      return new Error(`${err.message}. Buy credits: POST /v1/credits/purchases`, { cause: err });
    case "article_in_progress":
      return new Error(`${err.message}. Poll the running article first`, { cause: err });
    case "audit_in_progress":
      return new Error(`${err.message}. Poll the running audit first`, { cause: err });
    default:
      return err;
  }
}

/** A loopback receiver for the CLI: queues deliveries for `receiveDelivery`. */
export function startReceiver(port: number) {
  const queue: Delivery[] = [];
  const waiters: ((d: Delivery) => void)[] = [];
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const d = { headers: req.headers, rawBody: await req.text() };
      const w = waiters.shift();
      if (w) w(d);
      else queue.push(d);
      return new Response("ok");
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    next(timeoutMs: number): Promise<Delivery> {
      const d = queue.shift();
      if (d) return Promise.resolve(d);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error("no webhook delivery arrived")), timeoutMs);
        waiters.push((x) => {
          clearTimeout(t);
          resolve(x);
        });
      });
    },
    async close() {
      ac.abort();
      await server.finished;
    },
  };
}

function arg(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  if (i >= 0) return args[i + 1];
  const eq = args.find((a) => a.startsWith(`--${name}=`));
  return eq?.slice(name.length + 3);
}

if (import.meta.main) {
  const args = Deno.args;
  const port = arg(args, "webhook-port");
  const receiver = port ? startReceiver(Number(port)) : null;
  try {
    await runAgentFlow({
      baseUrl: arg(args, "base") ?? "http://localhost:8000",
      email: arg(args, "email") ?? `agent-${crypto.randomUUID().slice(0, 8)}@example.com`,
      siteUrl: arg(args, "site"),
      webhookUrl: receiver?.url,
      receiveDelivery: receiver ? (ms) => receiver.next(ms) : undefined,
      auditPollSeconds: Number(arg(args, "audit-poll") ?? 30),
      articlePollSeconds: Number(arg(args, "article-poll") ?? 60),
    });
  } catch (err) {
    if (err instanceof ServiceError) {
      console.error(`Failed: ${err.message}${err.docUrl ? ` (see ${err.docUrl})` : ""}`);
    } else console.error(`Failed: ${err instanceof Error ? err.message : err}`);
    Deno.exitCode = 1;
  } finally {
    await receiver?.close();
  }
}
