/**
 * Share links (additive): a public URL that opens a completed audit's report
 * (`/reports/{token}`) or a ready article's preview (`/previews/{token}`) without a key, until it
 * expires (1 to 90 days, default 30), is revoked, or the key or connected app that made it ends.
 * Create (201, idempotent), list (newest first, paged; never the token: its last 4 characters as
 * a hint) and revoke, for audits and articles alike; and for the whole account, every live link
 * (`GET /v1/shares`) and ending them all (`DELETE /v1/shares`) (domain/shares/links.ts).
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import {
  createShare,
  DEFAULT_SHARE_DAYS,
  DEFAULT_SHARE_PAGE,
  endAllShares,
  liveSharesOfAccount,
  liveShareView,
  MAX_LIVE_SHARES,
  MAX_SHARE_DAYS,
  MAX_SHARE_PAGE,
  revokeShare,
  type ShareKind,
  type ShareOwner,
  sharesOf,
  shareUrl,
  shareView,
} from "../../domain/shares/mod.ts";
import type { AccountActor } from "../actor.ts";
import { defineOperation } from "../operation.ts";
import { ArticleIdParam } from "./articles.ts";
import { AuditIdParam, NextCursor } from "./audits.ts";

export const CreateShareBody = z.object({
  expires_in_days: z.number().int().min(1).max(MAX_SHARE_DAYS).optional().openapi({
    description: `Days until the link stops working, 1 to ${MAX_SHARE_DAYS} (default ` +
      `${DEFAULT_SHARE_DAYS}); a sandbox key's link ends with the sandbox key at the latest`,
    example: DEFAULT_SHARE_DAYS,
  }),
}).strict().openapi("CreateShareRequest");

const ShareStatus = z.enum(["active", "expired", "revoked"]);

const shareFields = {
  share_id: z.string().openapi({ example: "shr_0m3x9k2a7c1f4z8q2w6e5r" }),
  status: ShareStatus,
  hint: z.string().openapi({
    description: "The token's last 4 characters, to tell links apart (the token itself is " +
      "shown once, when the link is created)",
    example: "…x9Qa",
  }),
  created_at: z.string(),
  expires_at: z.string(),
  revoked_at: z.string().nullable().openapi({
    description: "When it stopped opening before its expiry (null where that is not known)",
  }),
  revoked_reason: z.enum(["user", "key_ended", "app_ended"]).nullable().openapi({
    description: "Why it is revoked: user (revoked by the owner, alone or with all links); " +
      "key_ended / app_ended (the API key or connected app that made it was revoked or " +
      "expired, which ends its links)",
  }),
  created_by: z.object({
    key_id: z.string().nullable().openapi({
      description: "The API key that made it, or that approved the connected app which did",
    }),
    connected_app_id: z.string().nullable().openapi({
      description: "The connected app (GET /v1/connected-apps) whose token made it; null for a key",
    }),
  }).openapi({ description: "Who made it: the link ends when this key or app ends" }),
};

export const AuditShare = z.object({ ...shareFields, audit_id: z.string() }).openapi("AuditShare");
export const ArticleShare = z.object({ ...shareFields, article_id: z.string() }).openapi(
  "ArticleShare",
);

const createdFields = {
  url: z.string().openapi({
    description: "The page anyone with the link can open without a key (noindex); shown once",
    example: "http://localhost:8000/reports/x3Jd…",
  }),
};
export const AuditShareCreated = AuditShare.extend(createdFields).openapi("AuditShareCreated");
export const ArticleShareCreated = ArticleShare.extend(createdFields).openapi(
  "ArticleShareCreated",
);

export const SharePageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_SHARE_PAGE).optional().openapi({
    description: `Links per page, 1 to ${MAX_SHARE_PAGE} (default ${DEFAULT_SHARE_PAGE})`,
    example: DEFAULT_SHARE_PAGE,
  }),
  cursor: z.string().min(1).max(3000).optional().openapi({
    description: "The `next_cursor` of the previous page; omit for the first page",
  }),
});

export const AuditShareList = z.object({
  audit_id: z.string(),
  data: z.array(AuditShare),
  next_cursor: NextCursor,
}).openapi("AuditShareList");
export const ArticleShareList = z.object({
  article_id: z.string(),
  data: z.array(ArticleShare),
  next_cursor: NextCursor,
}).openapi("ArticleShareList");

export const AccountShare = z.object({
  ...shareFields,
  kind: z.enum(["audit", "article"]).openapi({
    description: "What it opens: an audit's report or an article's preview",
  }),
  audit_id: z.string().optional().openapi({ description: "kind audit: the audit" }),
  article_id: z.string().optional().openapi({ description: "kind article: the article" }),
}).openapi("AccountShare");

export const AccountShareList = z.object({
  data: z.array(AccountShare),
  next_cursor: NextCursor,
}).openapi("AccountShareList");

export const EndedShares = z.object({
  ended: z.number().int().openapi({
    description: "Links that were live and now answer 404",
    example: 3,
  }),
}).openapi("EndedShares");

const ShareIdParam = z.object({
  shareId: z.string().min(1).max(100).openapi({ param: { name: "shareId", in: "path" } }),
});

function ownerOf(actor: AccountActor): ShareOwner {
  return {
    accountId: actor.accountId,
    mode: actor.mode,
    keyId: actor.keyId,
    keyExpiresAt: actor.principal?.key.expiresAt ?? null,
    grantId: actor.credential.kind === "token" ? actor.credential.grantId : null,
  };
}

const CREATE_ERRORS = [
  "not_found",
  "invalid_state",
  "limit_reached",
  "idempotency_conflict",
  "payload_too_large",
] as const;

const createDescription = (what: string, page: string) =>
  `Makes a link that opens ${what} without a key (\`${page}/{token}\`: noindex, no-referrer, ` +
  `a strict Content-Security-Policy, rate-limited per client IP) until it expires or is ` +
  `revoked. The token is 256 random bits, stored hashed; the \`url\` is shown once, in this ` +
  `answer. It also ends when the API key that made it is revoked or expires, or when the ` +
  `connected app whose token made it is disconnected or lapses. At most ${MAX_LIVE_SHARES} ` +
  `live links per ${what.split(" ").at(-1)}.`;

export const createAuditShareOp = defineOperation({
  id: "audit_shares.create",
  method: "post",
  path: "/v1/audits/{auditId}/shares",
  tags: ["Audits"],
  summary: "Share a completed audit's report through a link that needs no key (201)",
  description: createDescription("the report of this audit", "/reports"),
  access: "key",
  tokens: "allow",
  leaves: "a share link, ending with the key or connected app that made it",
  params: AuditIdParam,
  body: CreateShareBody,
  optionalBody: true,
  bodyDescription: `Optional; no body (or {}) makes a link for ${DEFAULT_SHARE_DAYS} days`,
  status: 201,
  output: AuditShareCreated,
  outputDescription: "The link, shown once",
  errors: [...CREATE_ERRORS],
  idempotent: true,
  sensitive: true,
  async run({ params, body }, { services, actor, baseUrl }) {
    return await created(services.deps, ownerOf(actor), "audit", params.auditId, body, baseUrl);
  },
});

export const listAuditSharesOp = defineOperation({
  id: "audit_shares.list",
  method: "get",
  path: "/v1/audits/{auditId}/shares",
  tags: ["Audits"],
  summary: "The share links of an audit's report, newest first: active, expired (kept a week) " +
    "and revoked",
  access: "key",
  tokens: "allow",
  params: AuditIdParam,
  query: SharePageQuery,
  status: 200,
  output: AuditShareList,
  outputDescription: "A page of the links, newest first, never the token",
  errors: ["not_found"],
  async run({ params, query }, { services, actor }) {
    const page = await sharesOf(services.deps, actor, "audit", params.auditId, query);
    return {
      audit_id: params.auditId,
      data: page.data.map((s) => shareView(s.share, s.state) as z.output<typeof AuditShare>),
      next_cursor: page.next_cursor,
    };
  },
});

export const revokeAuditShareOp = defineOperation({
  id: "audit_shares.revoke",
  method: "delete",
  path: "/v1/audits/{auditId}/shares/{shareId}",
  tags: ["Audits"],
  summary: "Revoke a share link of an audit's report: it answers 404 from now on",
  access: "key",
  tokens: "allow",
  params: AuditIdParam.extend(ShareIdParam.shape),
  status: 200,
  output: AuditShare,
  outputDescription: "The revoked link (revoking it again answers the same)",
  errors: ["not_found"],
  async run({ params }, { services, actor }) {
    const s = await revokeShare(services.deps, actor, "audit", params.auditId, params.shareId);
    return shareView(s.share, s.state) as z.output<typeof AuditShare>;
  },
});

export const createArticleShareOp = defineOperation({
  id: "article_shares.create",
  method: "post",
  path: "/v1/articles/{articleId}/shares",
  tags: ["Articles"],
  summary: "Share a ready draft's preview for a human to read and approve (201)",
  description: createDescription("the preview of this article", "/previews"),
  access: "key",
  tokens: "allow",
  leaves: "a share link, ending with the key or connected app that made it",
  params: ArticleIdParam,
  body: CreateShareBody,
  optionalBody: true,
  bodyDescription: `Optional; no body (or {}) makes a link for ${DEFAULT_SHARE_DAYS} days`,
  status: 201,
  output: ArticleShareCreated,
  outputDescription: "The link, shown once",
  errors: [...CREATE_ERRORS],
  idempotent: true,
  sensitive: true,
  async run({ params, body }, { services, actor, baseUrl }) {
    return await created(
      services.deps,
      ownerOf(actor),
      "article",
      params.articleId,
      body,
      baseUrl,
    );
  },
});

export const listArticleSharesOp = defineOperation({
  id: "article_shares.list",
  method: "get",
  path: "/v1/articles/{articleId}/shares",
  tags: ["Articles"],
  summary: "The share links of an article's preview, newest first: active, expired (kept a " +
    "week) and revoked",
  access: "key",
  tokens: "allow",
  params: ArticleIdParam,
  query: SharePageQuery,
  status: 200,
  output: ArticleShareList,
  outputDescription: "A page of the links, newest first, never the token",
  errors: ["not_found"],
  async run({ params, query }, { services, actor }) {
    const page = await sharesOf(services.deps, actor, "article", params.articleId, query);
    return {
      article_id: params.articleId,
      data: page.data.map((s) => shareView(s.share, s.state) as z.output<typeof ArticleShare>),
      next_cursor: page.next_cursor,
    };
  },
});

export const revokeArticleShareOp = defineOperation({
  id: "article_shares.revoke",
  method: "delete",
  path: "/v1/articles/{articleId}/shares/{shareId}",
  tags: ["Articles"],
  summary: "Revoke a share link of an article's preview: it answers 404 from now on",
  access: "key",
  tokens: "allow",
  params: ArticleIdParam.extend(ShareIdParam.shape),
  status: 200,
  output: ArticleShare,
  outputDescription: "The revoked link (revoking it again answers the same)",
  errors: ["not_found"],
  async run({ params }, { services, actor }) {
    const s = await revokeShare(
      services.deps,
      actor,
      "article",
      params.articleId,
      params.shareId,
    );
    return shareView(s.share, s.state) as z.output<typeof ArticleShare>;
  },
});

async function created<K extends ShareKind>(
  deps: Parameters<typeof createShare>[0],
  owner: ShareOwner,
  kind: K,
  targetId: string,
  body: z.output<typeof CreateShareBody>,
  baseUrl: string,
) {
  const { share, token } = await createShare(deps, owner, kind, targetId, body.expires_in_days);
  return {
    ...shareView(share, { status: "active", revokedAt: null, reason: null }),
    url: shareUrl(baseUrl, kind, token),
  } as K extends "audit" ? z.output<typeof AuditShareCreated>
    : z.output<typeof ArticleShareCreated>;
}

export const listAccountSharesOp = defineOperation({
  id: "shares.list",
  method: "get",
  path: "/v1/shares",
  tags: ["Share links"],
  summary: "Every live share link of the account, audits' and articles', newest first",
  description: "The links that open something now (unexpired, unrevoked, their key and " +
    "connected app standing), each with what it opens and who made it, never the token. A " +
    "sandbox key sees the sandbox side's links. A page may hold fewer than `limit` links while " +
    "many have just expired: follow `next_cursor` until it is null.",
  access: "key",
  tokens: "allow",
  query: SharePageQuery,
  status: 200,
  output: AccountShareList,
  outputDescription: "A page of the live links",
  errors: [],
  async run({ query }, { services, actor }) {
    const page = await liveSharesOfAccount(services.deps, actor, query);
    return {
      data: page.data.map((l) => liveShareView(l) as z.output<typeof AccountShare>),
      next_cursor: page.next_cursor,
    };
  },
});

export const endAccountSharesOp = defineOperation({
  id: "shares.end_all",
  method: "delete",
  path: "/v1/shares",
  tags: ["Share links"],
  summary: "End every live share link of the account at once: each answers 404 from now on",
  description: "Revokes every link `GET /v1/shares` would list (a sandbox key: the sandbox " +
    "side's). Links made while it runs may stay; calling again ends them (and answers 0 when " +
    "nothing is left). Not for connected apps (OAuth tokens): it ends more than their own links.",
  access: "key",
  tokens: "refuse",
  status: 200,
  output: EndedShares,
  outputDescription: "How many links ended",
  errors: [],
  async run(_input, { services, actor }) {
    return { ended: await endAllShares(services.deps, actor) };
  },
});

/** The share operations, in the order the API reference lists them. */
export const AUDIT_SHARE_OPERATIONS = [createAuditShareOp, listAuditSharesOp, revokeAuditShareOp];
export const ARTICLE_SHARE_OPERATIONS = [
  createArticleShareOp,
  listArticleSharesOp,
  revokeArticleShareOp,
];
export const ACCOUNT_SHARE_OPERATIONS = [listAccountSharesOp, endAccountSharesOp];
