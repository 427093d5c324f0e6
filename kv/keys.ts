import type { IdempotencyRecord } from "./types.ts";
import type { Key } from "./typed.ts";

/**
 * The key schema: every Deno KV key the service uses is built here, so the layout of the
 * store can be read in one place. Collections are snake_case plurals; account-owned records
 * are keyed under their account so another account's id simply misses.
 *
 * What each family holds, and which indexes are written with which record, is declared in
 * domain/platform/store.ts, whose `keys` are these builders typed by their values (domain code reads
 * through those). The storage layer's own families are typed here, since kv/ reads them itself.
 */
export const keys = {
  account: (accountId: string) => ["accounts", accountId] as const,
  accountByEmail: (email: string) => ["accounts_by_email", email] as const,

  /** API key record, found by the SHA-256 hex of the raw key. */
  apiKey: (hash: string) => ["api_keys", hash] as const,
  /** Account → key id → hash, for listing and revoking by id. */
  apiKeyOfAccount: (accountId: string, keyId: string) =>
    ["api_keys_by_account", accountId, keyId] as const,
  apiKeysOfAccount: (accountId: string) => ["api_keys_by_account", accountId] as const,
  /** Last use of a key, flushed from memory in batches. */
  apiKeyLastUsed: (keyId: string) => ["api_key_last_used", keyId] as const,
  /**
   * The revocation signal, one shard of it (domain/identity/auth.ts `revocationShard` of the account): a
   * sequence number and the last changes that made cached keys unusable (`signalAuthChange`),
   * written in the same commit as each change. Every web process follows every shard (one
   * `getMany`, one `watch`) and drops the named accounts from its key cache.
   */
  authRevocations: (shard: number) => ["auth_revocations", shard] as const,
  /** Trial usage shared by a sandbox key and the keys it mints. */
  sandboxUsage: (ledgerId: string) => ["sandbox_usage", ledgerId] as const,

  project: (accountId: string, projectId: string) => ["projects", accountId, projectId] as const,
  projectsOfAccount: (accountId: string) => ["projects", accountId] as const,

  audit: (accountId: string, auditId: string) => ["audits", accountId, auditId] as const,
  auditOwner: (auditId: string) => ["audit_owner", auditId] as const,
  /** The one queued or running audit of a project, if any. */
  activeAudit: (projectId: string) => ["active_audit", projectId] as const,
  /**
   * An audit's staging credentials, sealed (domain/audits/site_access.ts): written with the audit,
   * deleted by its finishing commit.
   */
  auditAuth: (auditId: string) => ["audit_auth", auditId] as const,

  article: (accountId: string, articleId: string) => ["articles", accountId, articleId] as const,
  articleOwner: (articleId: string) => ["article_owner", articleId] as const,
  /** The one generating API article of a project, if any. */
  activeArticle: (projectId: string) => ["active_article", projectId] as const,
  /**
   * A client's durable handle on an audit or article (an MCP task, domain/jobs/tasks.ts), under
   * the account that opened it: another account's task id simply misses.
   */
  jobTask: (accountId: string, taskId: string) => ["job_tasks", accountId, taskId] as const,

  /** A re-check of one check of a completed audit (domain/rechecks/). */
  recheck: (accountId: string, recheckId: string) => ["rechecks", accountId, recheckId] as const,
  recheckOwner: (recheckId: string) => ["recheck_owner", recheckId] as const,
  /** The URLs a re-check fetches, in the order of the audit's evidence, and their outcomes. */
  recheckItem: (recheckId: string, seq: number) => ["recheck_items", recheckId, seq] as const,
  recheckItems: (recheckId: string) => ["recheck_items", recheckId] as const,

  /**
   * An audit's crawl, stored as it goes so any process can take the next step (docs/audit.md,
   * "Storage"). Each collection sorts the way the API lists it.
   */
  auditCrawl: (auditId: string) => ["audit_crawl", auditId] as const,
  /** The token of the worker that owns the audit's current step; the step's last commit checks it. */
  auditStep: (auditId: string) => ["audit_step", auditId] as const,
  /**
   * A partitioned crawl's claims (domain/audit_engine/crawl/partition.ts): `next` 0 (the claim
   * pointer), `claim` <start> (a leased range of frontier positions), `recorder` 0 (the one
   * recording step's lock), `helper` <k> (a helper worker's slot), `pace` <host> (a host's next slot).
   */
  auditSlice: (auditId: string, part: string, n: number | string) =>
    ["audit_slices", auditId, part, n] as const,
  auditSlicesOf: (auditId: string, part: string) => ["audit_slices", auditId, part] as const,
  auditSlices: (auditId: string) => ["audit_slices", auditId] as const,
  auditSlicesAll: () => ["audit_slices"] as const,
  /** One record per URL the crawl met (seen set and page inventory), by URL. */
  auditPage: (auditId: string, url: string) => ["audit_pages", auditId, url] as const,
  auditPages: (auditId: string) => ["audit_pages", auditId] as const,
  /** URLs to fetch, in breadth-first order. */
  auditFrontier: (auditId: string, seq: number) => ["audit_frontier", auditId, seq] as const,
  auditFrontierAll: (auditId: string) => ["audit_frontier", auditId] as const,
  /** A page's internal links (hashed targets and anchor texts), in chunks. */
  auditLinks: (auditId: string, url: string, chunk: number) =>
    ["audit_links", auditId, url, chunk] as const,
  auditLinksAll: (auditId: string) => ["audit_links", auditId] as const,
  /** Evidence of one affected item of a check, by check, then URL. */
  auditFinding: (auditId: string, check: string, url: string, n: number) =>
    ["audit_findings", auditId, check, url, n] as const,
  auditFindings: (auditId: string, check: string) => ["audit_findings", auditId, check] as const,
  /** The evidence items of one check about one URL (a re-check reads its link targets). */
  auditFindingsOfUrl: (auditId: string, check: string, url: string) =>
    ["audit_findings", auditId, check, url] as const,
  auditFindingsAll: (auditId: string) => ["audit_findings", auditId] as const,
  /** The finished audit's issues (one small value: at most one entry per check). */
  auditIssues: (auditId: string) => ["audit_issues", auditId] as const,
  /** A completed audit's page groups (domain/audits/groups.ts), one small value per group. */
  auditGroup: (auditId: string, name: string) => ["audit_groups", auditId, name] as const,
  auditGroupsAll: (auditId: string) => ["audit_groups", auditId] as const,
  /** Group, URL → nothing: the index `?group=` reads in pages, written once per page. */
  auditGroupPage: (auditId: string, name: string, url: string) =>
    ["audit_group_pages", auditId, name, url] as const,
  auditGroupPages: (auditId: string, name: string) => ["audit_group_pages", auditId, name] as const,
  auditGroupPagesAll: (auditId: string) => ["audit_group_pages", auditId] as const,
  /**
   * A completed audit's redirect map (domain/audits/fixes.ts): broken internal URL → the live URL
   * it most likely meant, worked out on first read; the marker says the map is whole.
   */
  auditRedirectGuess: (auditId: string, from: string) =>
    ["audit_redirect_guesses", auditId, from] as const,
  auditRedirectGuesses: (auditId: string) => ["audit_redirect_guesses", auditId] as const,
  auditRedirectMapDone: (auditId: string) => ["audit_redirect_map_done", auditId] as const,
  /**
   * Duplicate-detection index: pages by a digest of their title, description or text fingerprint
   * (never the raw text: a key holds 2 KiB), per crawl step one value per kind and bucket (the
   * digest's first hex digit) with the digest, URL and text of each of the step's pages (a run:
   * `run` names the step's write, with a chunk number; crawl/dup_runs.ts).
   */
  auditDupRun: (auditId: string, kind: string, bucket: string, run: string) =>
    ["audit_dup_runs", auditId, kind, bucket, run] as const,
  auditDupRunsOfBucket: (auditId: string, kind: string, bucket: string) =>
    ["audit_dup_runs", auditId, kind, bucket] as const,
  /** The same index as one key per page and kind, as crawls begun before the runs wrote it. */
  auditDup: (auditId: string, kind: string, digest: string, url: string) =>
    ["audit_dups", auditId, kind, digest, url] as const,
  auditDups: (auditId: string, kind: string) => ["audit_dups", auditId, kind] as const,
  /**
   * Near-duplicate index: per crawl step and LSH band number, one value with the band's bin
   * values and URL hash of each of the step's pages (a run: `run` names the step's write, with a
   * chunk number), and one entry per page with its URL, text hash and signature. The pass sorts
   * one band's runs at a time, and pages that share a band are compared (docs/audit.md, "Visible
   * text").
   */
  auditNearRun: (auditId: string, band: number, run: string) =>
    ["audit_near", auditId, band, run] as const,
  auditNearRunsOfBand: (auditId: string, band: number) => ["audit_near", auditId, band] as const,
  auditNearBands: (auditId: string) => ["audit_near", auditId] as const,
  auditNearSig: (auditId: string, urlHash: number) => ["audit_near_sig", auditId, urlHash] as const,
  /**
   * Same-site resources a crawled page loads (broken_resources): hashed URLs and the element
   * referencing each (domain/audit_engine/resources.ts), one value per page.
   */
  auditEmbeds: (auditId: string, url: string) => ["audit_embeds", auditId, url] as const,
  auditEmbedsAll: (auditId: string) => ["audit_embeds", auditId] as const,
  /** The anchors an HTML page offers, hashed (broken_fragment; crawl/finalize/fragments.ts). */
  auditAnchors: (auditId: string, url: string) => ["audit_anchors", auditId, url] as const,
  auditAnchorsAll: (auditId: string) => ["audit_anchors", auditId] as const,
  /** A page's links with a `#fragment` to pages of the site: targets and fragments. */
  auditFragLinks: (auditId: string, url: string) => ["audit_frag_links", auditId, url] as const,
  auditFragLinksAll: (auditId: string) => ["audit_frag_links", auditId] as const,
  /**
   * A redirecting or failing URL by its hash, written by the site-wide passes so they keep
   * numbers, not strings, per such URL (crawl/finalize/url_names.ts).
   */
  auditUrlName: (auditId: string, hash: number) => ["audit_url_name", auditId, hash] as const,
  auditUrlNames: (auditId: string) => ["audit_url_name", auditId] as const,
  /**
   * An HTML page's validators, body digest and parsed facts, for the project's next audit to
   * reuse (incremental crawls); kept for the project's latest completed audit only.
   */
  pageReuse: (auditId: string, url: string) => ["page_reuse", auditId, url] as const,
  pageReuseAll: (auditId: string) => ["page_reuse", auditId] as const,
  /** A distinct same-site resource to check: its queue position and, once checked, its answer. */
  auditResource: (auditId: string, url: string) => ["audit_resources", auditId, url] as const,
  auditResources: (auditId: string) => ["audit_resources", auditId] as const,
  /** Resources in the order found, checked after the crawl (crawl/resource_checks.ts). */
  auditResourceQueue: (auditId: string, seq: number) =>
    ["audit_resource_queue", auditId, seq] as const,
  auditResourceQueueAll: (auditId: string) => ["audit_resource_queue", auditId] as const,
  /**
   * A check's own working data for one audit, under its id and parts of its choosing
   * (domain/audit_engine/check_data.ts): pruned with the rest of the crawl's working state, so a
   * check that stores something adds no key family, value type or prune prefix of its own.
   */
  auditCheckData: (auditId: string, check: string, ...parts: (string | number)[]) =>
    ["audit_check_data", auditId, check, ...parts] as const,
  /**
   * The library a script's first bytes show, as audits before `auditCheckData` stored it: read
   * only by an audit that was running when that changed (and pruned); drop it after.
   */
  auditBanner: (auditId: string, url: string) => ["audit_banners", auditId, url] as const,
  /** Sitemap URLs in chunks, crawled after the link graph (orphans). */
  auditSitemapChunk: (auditId: string, n: number) => ["audit_sitemap_urls", auditId, n] as const,
  /** Larger texts (robots.txt bodies) split into chunks under a name. */
  auditBlob: (auditId: string, name: string, n: number) =>
    ["audit_blobs", auditId, name, n] as const,
  auditBlobs: (auditId: string, name: string) => ["audit_blobs", auditId, name] as const,
  /** Indexable pages in crawl order (shallowest first), for article internal links. */
  auditSitePage: (auditId: string, seq: number) => ["audit_site_pages", auditId, seq] as const,
  auditSitePages: (auditId: string) => ["audit_site_pages", auditId] as const,
  /** Whole-audit prefixes of the crawl's working state, for pruning (domain/audit_engine/prune.ts). */
  auditDupsAll: (auditId: string) => ["audit_dups", auditId] as const,
  auditDupRunsAll: (auditId: string) => ["audit_dup_runs", auditId] as const,
  auditNearSigs: (auditId: string) => ["audit_near_sig", auditId] as const,
  auditBanners: (auditId: string) => ["audit_banners", auditId] as const,
  auditCheckDataAll: (auditId: string) => ["audit_check_data", auditId] as const,
  auditSitemapChunks: (auditId: string) => ["audit_sitemap_urls", auditId] as const,
  auditBlobsAll: (auditId: string) => ["audit_blobs", auditId] as const,
  /**
   * A finished audit whose crawl working state is to be deleted, by the time the sweep may start
   * (written in the finishing commit; deleted once everything is gone).
   */
  auditPrune: (dueAt: number, auditId: string) => ["audit_prune", dueAt, auditId] as const,
  auditPrunesDue: () => ["audit_prune"] as const,
  /** Every audit's crawl state (the backfill of prune markers walks it once). */
  auditCrawls: () => ["audit_crawl"] as const,
  /** Where the one-time backfill of prune markers stands (domain/audit_engine/prune.ts). */
  pruneBackfill: () => ["audit_prune_backfill"] as const,

  /**
   * Lab metrics (LCP, CLS, TBT...) of one page a rendered audit rendered in lab conditions, by
   * URL: at most `RENDER_LAB_PAGES` per audit, kept with the findings (the HTML report shows them).
   */
  auditLab: (auditId: string, url: string) => ["audit_lab", auditId, url] as const,
  auditLabs: (auditId: string) => ["audit_lab", auditId] as const,

  /**
   * A share link of an audit report or an article preview, under its account and target (the
   * audit or article id), so a target's links are one prefix and a foreign id simply misses.
   */
  share: (accountId: string, targetId: string, shareId: string) =>
    ["shares", accountId, targetId, shareId] as const,
  sharesOfTarget: (accountId: string, targetId: string) => ["shares", accountId, targetId] as const,
  sharesOfAccount: (accountId: string) => ["shares", accountId] as const,
  /** The SHA-256 hex of a share link's token → where its share record is (the public lookup). */
  shareByToken: (tokenHash: string) => ["share_tokens", tokenHash] as const,
  /**
   * The unexpired, unrevoked links of one audit or article: one small array (at most the cap),
   * rewritten in the same commit as each share and revocation of that target, so the cap is an
   * exact count under concurrency (domain/shares/links.ts).
   */
  shareLiveOfTarget: (accountId: string, targetId: string) =>
    ["share_live_targets", accountId, targetId] as const,
  /** Account, share id → a live link (deleted with its revocation): the account's listing. */
  shareLive: (accountId: string, shareId: string) => ["share_live", accountId, shareId] as const,
  sharesLiveOfAccount: (accountId: string) => ["share_live", accountId] as const,
  /** Set once the account's links made before the live indexes existed are indexed. */
  shareIndexed: (accountId: string) => ["share_indexed", accountId] as const,

  /** What the latest completed audit learnt about a project's site (pages for internal links). */
  siteFacts: (projectId: string) => ["site_facts", projectId] as const,
  /** The project's audit whose stored page facts the next incremental audit reuses. */
  reuseBase: (projectId: string) => ["reuse_base", projectId] as const,

  /** A project's audit schedule (at most one per project). */
  schedule: (projectId: string) => ["schedules", projectId] as const,
  /** Schedules by the time the dispatcher should next look at them (their run, or a retry). */
  scheduleDue: (at: number, projectId: string) => ["schedules_due", at, projectId] as const,
  /** A schedule's own sealed staging credentials, copied into each audit it starts. */
  scheduleAuth: (projectId: string) => ["schedule_auth", projectId] as const,
  /** A due slot of a schedule, claimed once (versionstamp check) so it runs exactly once. */
  scheduleSlot: (projectId: string, dueAt: number) => ["schedule_slots", projectId, dueAt] as const,

  /** Jobs that were started and not finished, swept by the stale-job cron. */
  runningJob: (kind: string, id: string) => ["running_jobs", kind, id] as const,
  runningJobs: () => ["running_jobs"] as const,
  runningJobsOf: (kind: string) => ["running_jobs", kind] as const,

  /** An idempotent request's record, by scope and the SHA-256 of its Idempotency-Key. */
  idempotency: (scope: string, keyDigest: string): Key<IdempotencyRecord> => [
    "idempotency",
    scope,
    keyDigest,
  ],
  /** Sandbox accounts opened by one address block on one UTC day (signup abuse limit). */
  signupBlock: (block: string, dayStart: number) => ["signup_blocks", block, dayStart] as const,
  /** Requests counted in one fixed window (kv/rate_limiter.ts). */
  rateLimit: (bucket: string, windowStart: number): Key<number> => [
    "rate_limits",
    bucket,
    windowStart,
  ],

  balance: (accountId: string) => ["balances", accountId] as const,
  ledgerEntry: (accountId: string, entryId: string) =>
    ["credit_ledger", accountId, entryId] as const,
  ledgerOfAccount: (accountId: string) => ["credit_ledger", accountId] as const,
  subscription: (projectId: string) => ["subscriptions", projectId] as const,
  checkout: (sessionId: string) => ["checkouts", sessionId] as const,
  pendingCheckout: (projectId: string) => ["pending_checkouts", projectId] as const,
  stripeEvent: (eventId: string) => ["stripe_events", eventId] as const,
  /** Marks a grant or refund reference as applied, so each is credited once (`kind`: grant|refund). */
  ledgerRef: (accountId: string, kind: string, ref: string) =>
    ["credit_ledger_refs", accountId, kind, ref] as const,
  /** A paid credit pack by Stripe PaymentIntent id, for its refunds and disputes. */
  stripePayment: (paymentIntentId: string) => ["stripe_payments", paymentIntentId] as const,
  /** Stripe subscription id → {projectId, accountId}, for renewals whose metadata is missing. */
  stripeSubscription: (subscriptionId: string) => ["stripe_subscriptions", subscriptionId] as const,

  /**
   * An upgrade an agent started and a human finishes (domain/upgrades/), under its account so
   * another account's id simply misses; its owner by id alone (the human's pages arrive with
   * the id); a user code's keyed digest → where its upgrade is (deleted once paid, expiring with
   * the code); the account's one pending upgrade (expiring with it); a human's page session
   * (the digest of its cookie) → the upgrade it opened.
   */
  upgrade: (accountId: string, upgradeId: string) => ["upgrades", accountId, upgradeId] as const,
  upgradesOfAccount: (accountId: string) => ["upgrades", accountId] as const,
  upgradeOwner: (upgradeId: string) => ["upgrade_owner", upgradeId] as const,
  upgradeCode: (codeDigest: string) => ["upgrade_codes", codeDigest] as const,
  upgradePending: (accountId: string) => ["upgrade_pending", accountId] as const,

  webhook: (accountId: string, webhookId: string) => ["webhooks", accountId, webhookId] as const,
  webhooksOfAccount: (accountId: string) => ["webhooks", accountId] as const,
  webhookCount: (accountId: string) => ["webhook_counts", accountId] as const,
  /** Last 2xx time of an endpoint as a KvU64 written with `max`, so successes never conflict. */
  webhookLastSuccess: (webhookId: string) => ["webhook_last_success", webhookId] as const,
  delivery: (deliveryId: string) => ["deliveries", deliveryId] as const,
  deliveriesOfWebhook: (webhookId: string, deliveryId: string) =>
    ["deliveries_by_webhook", webhookId, deliveryId] as const,
  deliveriesOfWebhookPrefix: (webhookId: string) => ["deliveries_by_webhook", webhookId] as const,
  /** Pending deliveries by the time after which the sweep treats their queue message as lost. */
  deliveryDue: (sweepAt: number, deliveryId: string) =>
    ["deliveries_due", sweepAt, deliveryId] as const,
  deliveriesDue: () => ["deliveries_due"] as const,

  /**
   * Outbound mail (domain/mail/): a message's record (the truth of its job), pending messages by
   * the time after which the sweep treats their queue message as lost, an email verification by
   * id and by the SHA-256 hex of a link's token, and the send times of verification mails within
   * the last hour per account or address (`acct:<id>`, `addr:<sha256>`).
   */
  mail: (mailId: string) => ["mail", mailId] as const,
  mailDue: (sweepAt: number, mailId: string) => ["mail_due", sweepAt, mailId] as const,
  mailsDue: () => ["mail_due"] as const,
  emailVerification: (verificationId: string) => ["email_verifications", verificationId] as const,
  emailVerificationByToken: (tokenHash: string) =>
    ["email_verification_tokens", tokenHash] as const,
  verificationSends: (bucket: string) => ["verification_sends", bucket] as const,

  /** Events written with the change that caused them, drained into deliveries. */
  outbox: (eventId: string) => ["outbox", eventId] as const,
  outboxAll: () => ["outbox"] as const,

  /** Due jobs of the table queue (stores without native queues), ordered by due time. */
  jobQueue: (dueAt: number, id: string) => ["job_queue", dueAt, id] as const,

  /**
   * OAuth 2.1 (domain/identity/oauth/): an authorization in progress once an API key signed in on its
   * page (before that, its state lives in the page, sealed), by its random id; a dynamically registered client (RFC 7591), by client id; a fetched Client ID
   * Metadata Document, by the SHA-256 of its URL; an authorization code, an access token and a
   * refresh token, each by the SHA-256 hex of the raw value; a grant (a connected app: what one
   * approval allowed, the family of its tokens) under its account.
   */
  oauthRequest: (requestId: string) => ["oauth_requests", requestId] as const,
  /** The store's secret for sealing sign-in tickets when `WEBHOOK_ENCRYPTION_KEY` is unset. */
  oauthTicketSecret: () => ["oauth_ticket_secret"] as const,
  oauthClient: (clientId: string) => ["oauth_clients", clientId] as const,
  oauthClientDoc: (urlDigest: string) => ["oauth_client_docs", urlDigest] as const,
  oauthCode: (hash: string) => ["oauth_codes", hash] as const,
  oauthAccessToken: (hash: string) => ["oauth_access_tokens", hash] as const,
  oauthRefreshToken: (hash: string) => ["oauth_refresh_tokens", hash] as const,
  oauthGrant: (accountId: string, grantId: string) => ["oauth_grants", accountId, grantId] as const,
  oauthGrantsOfAccount: (accountId: string) => ["oauth_grants", accountId] as const,
  /** Bumped with every new grant of an account, so concurrent approvals count each other. */
  oauthGrantSeq: (accountId: string) => ["oauth_grant_seqs", accountId] as const,
  /** A grant under its client (by the SHA-256 of the client id): the client's live grants. */
  oauthClientGrant: (clientDigest: string, grantId: string) =>
    ["oauth_client_grants", clientDigest, grantId] as const,
  oauthClientGrants: (clientDigest: string) => ["oauth_client_grants", clientDigest] as const,
  /** A metadata-document client an approval used, by the SHA-256 of its URL. */
  oauthClientUse: (clientDigest: string) => ["oauth_client_uses", clientDigest] as const,

  /** Lease so that one process runs a cron tick. */
  lease: (name: string) => ["leases", name] as const,
};
