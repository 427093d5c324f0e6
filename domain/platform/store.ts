/**
 * The store: every KV key family, the type of the value under its keys, and the indexes written
 * with it, in one table. The keys themselves are laid out in kv/keys.ts (one builder per family);
 * this module gives each builder its value type, so a read through `keys` is typed by the key:
 *
 * ```ts
 * import type { Deps } from "./deps.ts";
 * declare const kv: Deno.Kv, id: string, a: string, p: string;
 * import { keys, read, readMany } from "./store.ts";
 * const account = (await read(kv, keys.account(id))).value; // AccountRecord | null
 * const [project, sub] = await readMany(kv, [keys.project(a, p), keys.subscription(p)]);
 * ```
 *
 * It lives in domain/ because the value types do: kv/ is imported by domain, never the other
 * way round. The storage layer's own families (rate-limit windows, idempotency records) are typed
 * at their builders in kv/keys.ts as well, since kv/ reads them itself.
 *
 * Roles: a `record` lists its `indexes`, the families written in the same atomic operation as
 * the record; an `index` names the record families it points into (`of`); a `value` is anything
 * else under one key; a `prefix` names the family it lists (`of`) and takes that family's value
 * type and key shape, so each value type is declared once. tests/foundation/store_schema.test.ts
 * checks that records and indexes name each other.
 *
 * @module
 */
import { keys as layout } from "../../kv/keys.ts";
import type { Family, TypedKeys } from "../../kv/typed.ts";
import type { IdempotencyRecord } from "../../kv/types.ts";
import type { ArticleRecord, SiteFactsRecord } from "../articles/types.ts";
import type {
  AnchorsValue,
  AuditPage,
  BackfillState,
  CrawlState,
  DupEntry,
  DupRun,
  EmbedsValue,
  Evidence,
  FragLinksValue,
  FrontierEntry,
  LabRecord,
  LinkChunk,
  NearRun,
  NearSig,
  PageRecord,
  PruneKind,
  ResourceRecord,
  ReuseBase,
  ReuseEntry,
  ScriptLibraryValue,
} from "../audit_engine/types.ts";
import type {
  AuditRecord,
  PageGroupRecord,
  RedirectGuess,
  SealedSiteAuth,
  StoredIssues,
} from "../audits/types.ts";
import type { RecheckItem, RecheckRecord } from "../rechecks/types.ts";
import type { AccountRecord, ApiKeyRecord, RevocationSignal } from "../identity/types.ts";
import type { LiveShare, ShareLocation, ShareRecord } from "../shares/types.ts";
import type { JobMessage } from "./deps.ts";
import type { JobTaskRecord, RunningJobMarker } from "../jobs/types.ts";
import type {
  AccessTokenRecord,
  AuthRequestRecord,
  CachedClientDoc,
  ClientGrantRef,
  ClientUse,
  CodeRecord,
  GrantRecord,
  RefreshTokenRecord,
  RegisteredClient,
} from "../identity/oauth/types.ts";
import type { ScheduleRecord, ScheduleRun } from "../monitoring/types.ts";
import type {
  BalanceRecord,
  CheckoutRecord,
  LedgerEntry,
  PackPaymentRecord,
  PendingCheckoutRecord,
  StripeEventRecord,
  SubscriptionRecord,
} from "../billing/types.ts";
import type { DeliveryRecord, OutboxEvent, WebhookRecord } from "../webhooks/types.ts";
import type { ProjectRecord, SandboxUsage } from "../projects/types.ts";
import type { UpgradeCodeTarget, UpgradeRecord } from "../upgrades/types.ts";
import type { EmailVerificationRecord, MailRecord } from "../mail/types.ts";

export { atomic, list, read, readAll, readMany, write } from "../../kv/typed.ts";
export type { Atomic, Entry, Key, ListedEntry, ListIterator, Prefix } from "../../kv/typed.ts";

type Name = keyof typeof layout;

/** The truth of something; `indexes` are written in the same atomic operation as it. */
function record<T>(...indexes: Name[]): Family<T, "record"> {
  return { role: "record", indexes };
}
/** An entry pointing into the record families `of` (its value: usually the record's id). */
function index<T>(...of: Name[]): Family<T, "index"> {
  return { role: "index", of };
}
/** Any other value under one key: a counter, a marker, a piece of working state. */
function value<T>(): Family<T, "value"> {
  return { role: "value" };
}
/** A prefix listing the family `of`: its entries hold that family's values, under its keys. */
function prefix<const F extends Name>(
  of: F,
): Family<never, "prefix"> & { readonly of: readonly [F] } {
  return { role: "prefix", of: [of] };
}

/** A table-queue row (jobs/table_queue.ts): the message and the attempts it has had. */
export interface QueuedJob {
  message: JobMessage;
  attempts: number;
}

/** A leader lease (jobs/leader.ts): who holds it, and until when. */
export interface LeaseRecord {
  holder: string;
  until: number;
}

/**
 * A lease of a partitioned crawl (domain/audit_engine/crawl/partition.ts): who holds it, until
 * when, and the end of its range (the claim pointer keeps its position in `end`).
 */
export interface SliceLease {
  holder: string;
  until: number;
  end: number;
}

/** The owner of an account-scoped record whose id arrives alone (a Stripe subscription id). */
export interface SubscriptionOwner {
  accountId: string;
  projectId: string;
}

export const schema = {
  // Accounts, API keys and the trial.
  account: record<AccountRecord>("accountByEmail"),
  /** Email → account id; its `versionstamp: null` check keeps emails unique. */
  accountByEmail: index<string>("account"),
  /** Keyed by the SHA-256 hex of the raw key. */
  apiKey: record<ApiKeyRecord>("apiKeyOfAccount"),
  /** Account, key id → key hash. */
  apiKeyOfAccount: index<string>("apiKey"),
  apiKeysOfAccount: prefix("apiKeyOfAccount"),
  /** Epoch ms, only ever moved forward (flushed from memory in batches). */
  apiKeyLastUsed: value<number>(),
  sandboxUsage: value<SandboxUsage>(),
  /** The revocation signal's shards, which every API process follows (domain/identity/auth.ts). */
  authRevocations: value<RevocationSignal>(),

  project: record<ProjectRecord>(),
  projectsOfAccount: prefix("project"),

  // Audits and articles (the truth of each job; domain/jobs/lifecycle.ts).
  audit: record<AuditRecord>("auditOwner", "activeAudit", "runningJob", "auditPrune"),
  /** Audit id → account id. */
  auditOwner: index<string>("audit"),
  /** Project id → the id of its one queued or running audit. */
  activeAudit: index<string>("audit"),
  /** Sealed staging credentials, from the audit's creation to its finishing commit. */
  auditAuth: value<SealedSiteAuth>(),
  article: record<ArticleRecord>("articleOwner", "activeArticle", "runningJob"),
  /** Article id → account id. */
  articleOwner: index<string>("article"),
  /** Project id → the id of its one generating API article. */
  activeArticle: index<string>("article"),
  /** An MCP task: the handle a client holds on one of the account's audits or articles. */
  jobTask: record<JobTaskRecord>(),
  /** Kind, job id → the job's lease, while it is accepted and unfinished (the stale-job sweep). */
  runningJob: index<RunningJobMarker>("audit", "article", "recheck"),
  runningJobs: prefix("runningJob"),
  runningJobsOf: prefix("runningJob"),

  // Re-checks of one check of a completed audit (domain/rechecks/), kept like the audit.
  recheck: record<RecheckRecord>("recheckOwner", "runningJob"),
  /** Re-check id → account id. */
  recheckOwner: index<string>("recheck"),
  recheckItem: value<RecheckItem>(),
  recheckItems: prefix("recheckItem"),

  // An audit's crawl (docs/audit.md, "Storage"), pruned after it ends (domain/audit_engine/prune.ts).
  auditCrawl: value<CrawlState>(),
  auditCrawls: prefix("auditCrawl"),
  /** The token of the claim that owns the current step. */
  auditStep: value<string>(),
  auditSlice: value<SliceLease>(),
  auditSlicesOf: prefix("auditSlice"),
  auditSlices: prefix("auditSlice"),
  auditSlicesAll: prefix("auditSlice"),
  auditPage: value<PageRecord>(),
  auditPages: prefix("auditPage"),
  auditFrontier: value<FrontierEntry>(),
  auditFrontierAll: prefix("auditFrontier"),
  auditLinks: value<LinkChunk>(),
  auditLinksAll: prefix("auditLinks"),
  auditFinding: value<Evidence>(),
  auditFindings: prefix("auditFinding"),
  auditFindingsOfUrl: prefix("auditFinding"),
  auditFindingsAll: prefix("auditFinding"),
  auditIssues: value<StoredIssues>(),
  auditGroup: value<PageGroupRecord>(),
  auditGroupsAll: prefix("auditGroup"),
  /** Its value is `true`: the key is the index. */
  auditGroupPage: value<true>(),
  auditGroupPages: prefix("auditGroupPage"),
  auditGroupPagesAll: prefix("auditGroupPage"),
  auditRedirectGuess: value<RedirectGuess>(),
  auditRedirectGuesses: prefix("auditRedirectGuess"),
  /** Guesses written (always whole when present). */
  auditRedirectMapDone: value<number>(),
  /** A number on entries written before the text moved into the value. */
  auditDup: value<DupEntry | number>(),
  auditDups: prefix("auditDup"),
  auditDupsAll: prefix("auditDup"),
  auditDupRun: value<DupRun>(),
  auditDupRunsOfBucket: prefix("auditDupRun"),
  auditDupRunsAll: prefix("auditDupRun"),
  auditNearRun: value<NearRun>(),
  auditNearRunsOfBand: prefix("auditNearRun"),
  auditNearBands: prefix("auditNearRun"),
  auditNearSig: value<NearSig>(),
  auditNearSigs: prefix("auditNearSig"),
  auditEmbeds: value<EmbedsValue>(),
  auditEmbedsAll: prefix("auditEmbeds"),
  auditAnchors: value<AnchorsValue>(),
  auditAnchorsAll: prefix("auditAnchors"),
  auditFragLinks: value<FragLinksValue>(),
  auditFragLinksAll: prefix("auditFragLinks"),
  auditUrlName: value<string>(),
  auditUrlNames: prefix("auditUrlName"),
  /** Kept for the project's latest completed audit only (a `reuse` prune marker drops older). */
  pageReuse: value<ReuseEntry>(),
  pageReuseAll: prefix("pageReuse"),
  auditResource: value<ResourceRecord>(),
  auditResources: prefix("auditResource"),
  /** Resource URLs in the order found, checked after the crawl. */
  auditResourceQueue: value<string>(),
  auditResourceQueueAll: prefix("auditResourceQueue"),
  /** Each check types its own data (domain/audit_engine/check_data.ts). */
  auditCheckData: value<unknown>(),
  auditCheckDataAll: prefix("auditCheckData"),
  auditBanner: value<ScriptLibraryValue>(),
  auditBanners: prefix("auditBanner"),
  auditSitemapChunk: value<string[]>(),
  auditSitemapChunks: prefix("auditSitemapChunk"),
  auditBlob: value<string>(),
  auditBlobs: prefix("auditBlob"),
  auditBlobsAll: prefix("auditBlob"),
  auditSitePage: value<AuditPage>(),
  auditSitePages: prefix("auditSitePage"),
  /** Due time, audit id → how the audit ended; written in its finishing commit. */
  auditPrune: index<PruneKind>("audit"),
  auditPrunesDue: prefix("auditPrune"),
  pruneBackfill: value<BackfillState>(),
  /** Lab metrics of a page rendered in lab conditions (kept with the findings). */
  auditLab: value<LabRecord>(),
  auditLabs: prefix("auditLab"),
  siteFacts: value<SiteFactsRecord>(),
  reuseBase: value<ReuseBase>(),

  // Share links of audit reports and article previews (domain/shares/links.ts).
  /** Kept (revoked or expired) until its KV expiry, a week after it expires. */
  share: record<ShareRecord>("shareByToken", "shareLiveOfTarget", "shareLive"),
  sharesOfTarget: prefix("share"),
  sharesOfAccount: prefix("share"),
  /** Token hash → the share; deleted when the share is revoked. */
  shareByToken: index<ShareLocation>("share"),
  /** A target's unexpired, unrevoked links (the cap's exact count). */
  shareLiveOfTarget: index<LiveShare[]>("share"),
  /** Account, share id → the live link; deleted when the share is revoked. */
  shareLive: index<LiveShare>("share"),
  sharesLiveOfAccount: prefix("shareLive"),
  /** The version of the account's share indexes (set once its older links are indexed). */
  shareIndexed: value<number>(),

  // Schedules.
  schedule: record<ScheduleRecord>("scheduleDue"),
  /** Time the dispatcher should look next, project id → project id. */
  scheduleDue: index<string>("schedule"),
  /** A due slot, claimed once (expires). */
  scheduleSlot: value<ScheduleRun>(),
  /** The schedule's sealed staging credentials, until a PUT without them or its removal. */
  scheduleAuth: value<SealedSiteAuth>(),

  // The storage layer's own (typed at their builders too).
  idempotency: value<IdempotencyRecord>(),
  rateLimit: value<number>(),
  /** Sandbox accounts opened from one address block on one day (expires). */
  signupBlock: value<number>(),

  // Money.
  balance: record<BalanceRecord>(),
  ledgerEntry: value<LedgerEntry>(),
  ledgerOfAccount: prefix("ledgerEntry"),
  /** Kind, ref → the ledger entry id that applied it. */
  ledgerRef: value<string>(),
  subscription: record<SubscriptionRecord>("stripeSubscription"),
  /** Stripe subscription id → its project, for renewals whose metadata is missing. */
  stripeSubscription: index<SubscriptionOwner>("subscription"),
  checkout: value<CheckoutRecord>(),
  pendingCheckout: value<PendingCheckoutRecord>(),
  stripeEvent: value<StripeEventRecord>(),
  stripePayment: value<PackPaymentRecord>(),

  // Upgrades an agent starts and a human finishes (domain/upgrades/).
  upgrade: record<UpgradeRecord>("upgradeOwner", "upgradeCode", "upgradePending"),
  upgradesOfAccount: prefix("upgrade"),
  /** Upgrade id → account id. */
  upgradeOwner: index<string>("upgrade"),
  /** Keyed digest of a user code → its upgrade; expires with the code, deleted once paid. */
  upgradeCode: index<UpgradeCodeTarget>("upgrade"),
  /** The account's one pending upgrade's id; expires with it. */
  upgradePending: index<string>("upgrade"),

  // Webhooks: endpoints, deliveries, the outbox.
  webhook: record<WebhookRecord>(),
  webhooksOfAccount: prefix("webhook"),
  /** Endpoints of the account (the cap), changed with each endpoint in one commit. */
  webhookCount: value<number>(),
  /** Last 2xx, epoch ms, written with `max` so successes never conflict. */
  webhookLastSuccess: value<Deno.KvU64>(),
  delivery: record<DeliveryRecord>("deliveriesOfWebhook", "deliveryDue"),
  deliveriesOfWebhook: index<true>("delivery"),
  deliveriesOfWebhookPrefix: prefix("deliveriesOfWebhook"),
  /** While pending: the time after which the sweep treats its queue message as lost. */
  deliveryDue: index<true>("delivery"),
  deliveriesDue: prefix("deliveryDue"),
  outbox: value<OutboxEvent>(),
  outboxAll: prefix("outbox"),

  // Outbound mail (domain/mail/): messages, and the email verifications they carry.
  mail: record<MailRecord>("mailDue"),
  /** While pending: the time after which the sweep treats its queue message as lost. */
  mailDue: index<true>("mail"),
  mailsDue: prefix("mailDue"),
  /** Kept (used or expired) until its KV expiry, a week after it expires. */
  emailVerification: record<EmailVerificationRecord>("emailVerificationByToken"),
  /** Token hash → verification id; every link a verification sent, until it expires in KV. */
  emailVerificationByToken: index<string>("emailVerification"),
  /** Send times (epoch ms) of verification mails in the last hour, per account or address. */
  verificationSends: value<number[]>(),

  // OAuth 2.1 for /mcp (domain/identity/oauth/); each expires in KV besides its own expiry time.
  oauthRequest: value<AuthRequestRecord>(),
  /** Base64 of 32 random bytes, made once (domain/identity/oauth/ticket.ts). */
  oauthTicketSecret: value<string>(),
  oauthClient: value<RegisteredClient>(),
  oauthClientDoc: value<CachedClientDoc>(),
  oauthCode: value<CodeRecord>(),
  /** Points into its grant, which is checked on every (uncached) use. */
  oauthAccessToken: index<AccessTokenRecord>("oauthGrant"),
  oauthRefreshToken: index<RefreshTokenRecord>("oauthGrant"),
  oauthGrant: record<GrantRecord>("oauthAccessToken", "oauthRefreshToken", "oauthClientGrant"),
  oauthGrantsOfAccount: prefix("oauthGrant"),
  /** A version counter: checked and bumped by every new grant of the account (the cap). */
  oauthGrantSeq: value<number>(),
  /** Deleted when its grant ends; the client's life is the latest of its live grants' ends. */
  oauthClientGrant: index<ClientGrantRef>("oauthGrant"),
  oauthClientGrants: prefix("oauthClientGrant"),
  oauthClientUse: value<ClientUse>(),

  // jobs/: the table queue and leader leases.
  jobQueue: value<QueuedJob>(),
  lease: value<LeaseRecord>(),
} as const satisfies { readonly [N in Name]: Family<unknown> };

/** The key builders of kv/keys.ts, each typed by its family's value. */
export const keys: TypedKeys<typeof layout, typeof schema> = layout;
