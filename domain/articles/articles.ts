import type { ArticleRecord, ArticleStatus, SiteFactsRecord } from "./types.ts";
import { atomically } from "../../kv/atomic.ts";
import {
  ApiError,
  atomic,
  type Deps,
  keys,
  newId,
  read,
  readMany,
  recordEvent,
} from "../platform/mod.ts";
import { claimJob, finishJob, type JobSpec } from "../jobs/mod.ts";
import { canSee } from "../identity/mod.ts";
import { addRefund, articleUnit, chargeFor, isActive, type WorkActor } from "../billing/mod.ts";
import type { KeyMode } from "../identity/types.ts";
import { projectVisibleTo } from "../projects/mod.ts";
import type { ArticleBrief, ArticleStage, GeneratedArticle, TokenUsage } from "../writing/mod.ts";

export type { ArticleStatus };

export type { ArticleRecord, SiteFactsRecord };

export const ARTICLE_LEASE_MS = 10 * 60_000;
export const ARTICLE_QUEUE_GRACE_MS = 2 * 60_000;
export const MAX_ARTICLE_ATTEMPTS = 3;

/**
 * How long one run may generate: well inside its lease, so the stale-job sweep (which resends a
 * job only once the lease has run out) can never start a second, paid generation while the first
 * is still talking to the model. The run is aborted at this point and fails `generation_timeout`.
 */
export function generationBudgetMs(leaseMs: number): number {
  return Math.max(Math.floor(leaseMs * 0.8), leaseMs - 60_000);
}

/** The lease of a run and the grace of a queued article: `JOB_LEASE_MS` when set, else the above. */
function leaseMs(deps: Deps, fallback: number): number {
  return deps.config.jobLeaseMs ?? fallback;
}
/** Markdown over this size is cut: a KV value holds at most 64 KiB with the rest of the record. */
const MAX_MARKDOWN_CHARS = 48_000;

export const SANDBOX_WATERMARK_NOTE =
  "Sandbox draft: generated on a free trial key. Draft-only, never published by the service; " +
  "upgrade to publish without this watermark.";

const GENERATING: ArticleStatus[] = ["queued", "generating", "qa"];

/**
 * Accepts an article for `actor` (an API key's account and mode). The checks run in one order:
 * visibility (a project the actor cannot see, `canSee`, is 404 `not_found` like a missing one),
 * then one API article may generate per project at a time (the project's active-article marker is
 * checked absent in the same commit), then the charge (subscription,
 * sandbox budget or 15 credits), the record, the count and the queue message commit together.
 */
export function createArticle(
  deps: Deps,
  actor: WorkActor,
  projectId: string,
  input: { topic?: string; primaryKeyword?: string },
): Promise<ArticleRecord> {
  const { kv, clock } = deps;
  const topic = (input.topic ?? titleFromKeyword(input.primaryKeyword!)).trim();
  const primaryKeyword = (input.primaryKeyword ?? input.topic!.toLowerCase()).trim();
  return atomically(kv, async () => {
    const [projectEntry, activeEntry, subEntry] = await readMany(kv, [
      keys.project(actor.accountId, projectId),
      keys.activeArticle(projectId),
      keys.subscription(projectId),
    ]);
    const project = projectEntry.value;
    if (!project || !canSee(actor.mode, project.sandbox)) {
      throw new ApiError("not_found", `No project '${projectId}' on this account`);
    }
    if (activeEntry.value) {
      const current = await read(kv, keys.article(actor.accountId, activeEntry.value));
      if (current.value && GENERATING.includes(current.value.status)) {
        throw new ApiError(
          "article_in_progress",
          `Article '${current.value.id}' is still generating for this project; poll it, then retry`,
        );
      }
    }
    const now = clock.now();
    const id = newId("art", now);
    const op = atomic(kv).check(projectEntry, activeEntry);
    const funding = await chargeFor(kv, op, {
      actor,
      project,
      subscription: subEntry,
      unit: "articles",
      // Without a model the built-in writer can only deliver an outline: see the catalogue.
      unitId: articleUnit(Boolean(deps.config.openai.apiKey)),
      ref: id,
      now,
    });
    const article: ArticleRecord = {
      id,
      accountId: actor.accountId,
      projectId,
      status: "queued",
      topic,
      primaryKeyword,
      language: project.language,
      country: project.country,
      sandbox: actor.mode === "sandbox",
      funding,
      createdAt: now,
      updatedAt: now,
      title: null,
      metaDescription: null,
      contentMarkdown: null,
      wordCount: null,
      qaScore: null,
      generator: null,
      usage: null,
      error: null,
      attempts: 0,
      leaseUntil: now + leaseMs(deps, ARTICLE_QUEUE_GRACE_MS),
      publishedAt: null,
      slug: null,
      url: null,
    };
    op
      .check({ key: keys.article(actor.accountId, id), versionstamp: null })
      .set(keys.article(actor.accountId, id), article)
      .set(keys.articleOwner(id), actor.accountId)
      .set(keys.activeArticle(projectId), id)
      .set(keys.runningJob("article", id), {
        id,
        accountId: actor.accountId,
        leaseUntil: article.leaseUntil,
      })
      .set(projectEntry.key, {
        ...project,
        status: "running",
        counts: { ...project.counts, articles: project.counts.articles + 1 },
      });
    deps.queue.enqueueIn(op, { type: "article", id });
    return { op, result: article };
  });
}

function titleFromKeyword(keyword: string): string {
  const k = keyword.trim();
  return k.charAt(0).toUpperCase() + k.slice(1);
}

/** An article of the account, or 404. */
export async function getArticle(
  deps: Deps,
  accountId: string,
  articleId: string,
  mode: KeyMode,
): Promise<ArticleRecord> {
  const article = (await read(deps.kv, keys.article(accountId, articleId))).value;
  if (!article || !(await projectVisibleTo(deps, accountId, article.projectId, mode))) {
    throw new ApiError("not_found", `No article '${articleId}' on this account`);
  }
  return article;
}

/**
 * Writes an article for a brief; the pipeline, injected so tests can swap it. It must stop and
 * throw when `signal` aborts (the run's time budget ran out).
 */
export type ArticleGenerator = (
  brief: ArticleBrief,
  onStage: (stage: ArticleStage) => Promise<void>,
  options: { signal: AbortSignal },
) => Promise<GeneratedArticle>;

/** The article's place in the one job lifecycle (domain/jobs/lifecycle.ts). */
export const ARTICLE_JOB: JobSpec<ArticleRecord> = {
  kind: "article",
  ownerKey: keys.articleOwner,
  recordKey: keys.article,
  activeKey: keys.activeArticle,
  unit: "articles",
  open: (a) => GENERATING.includes(a.status),
  queued: (a) => a.status === "queued",
  held: (a, now) => a.status !== "queued" && a.leaseUntil > now,
  newAttempt: () => true,
  maxAttempts: MAX_ARTICLE_ATTEMPTS,
  leaseMs: (deps) => leaseMs(deps, ARTICLE_LEASE_MS),
  claimed: (a, c) => ({
    ...a,
    status: "generating",
    attempts: c.attempts,
    leaseUntil: c.leaseUntil,
    updatedAt: c.now,
  }),
  interrupted: { code: "generation_interrupted", message: "Generation was interrupted too often" },
  failed: (a, error, now) => ({ ...a, status: "failed", updatedAt: now, error }),
};

/**
 * The queue handler: claims the article (lease), runs the pipeline while recording its stages,
 * then stores the draft as `ready` or marks it `failed` and refunds the charge, releasing the
 * project's in-progress slot either way. Safe to run any number of times for one article.
 */
export async function runArticleJob(
  deps: Deps,
  articleId: string,
  generate: ArticleGenerator,
): Promise<void> {
  const { kv, clock } = deps;
  const claim = await claimJob(deps, ARTICLE_JOB, articleId);
  if (!claim) return; // finished, held by another worker, or out of attempts (then failed)
  const { accountId, record: article } = claim;
  const key = keys.article(accountId, articleId);

  const facts = (await read(kv, keys.siteFacts(article.projectId))).value;
  const project = (await read(kv, keys.project(accountId, article.projectId))).value;
  const projectUrl = project ? new URL(project.url) : null;
  const host = facts?.host ?? projectUrl?.host ?? "";
  const brief: ArticleBrief = {
    topic: article.topic,
    primaryKeyword: article.primaryKeyword,
    language: article.language,
    country: article.country,
    // The project's scheme and port: relative links resolve to what the crawl fetched.
    siteFacts: {
      host,
      ...(projectUrl ? { origin: projectUrl.origin } : {}),
      pages: facts?.pages ?? [],
    },
  };
  const onStage = async (stage: ArticleStage) => {
    if (stage !== "qa") return;
    const cur = await read(kv, key);
    if (cur.value?.status === "generating") {
      await atomic(kv).check(cur).set(key, { ...cur.value, status: "qa", updatedAt: clock.now() })
        .commit();
    }
  };
  // The budget is a real timer, not the injected clock: it bounds real calls to the model.
  const budget = new AbortController();
  const timer = setTimeout(() => budget.abort(), generationBudgetMs(ARTICLE_JOB.leaseMs(deps)));
  try {
    const result = await generate(brief, onStage, { signal: budget.signal });
    await finishArticle(deps, articleId, { kind: "ready", result }, article.attempts);
  } catch (err) {
    const e = err as { code?: string; message?: string; details?: { usage?: TokenUsage } };
    await finishArticle(deps, articleId, {
      kind: "failed",
      error: {
        code: typeof e.code === "string" ? e.code : "generation_failed",
        message: (e.message ?? "Generation failed").slice(0, 500),
      },
      usage: e.details?.usage ?? null,
    }, article.attempts);
  } finally {
    clearTimeout(timer);
  }
}

type ArticleOutcome =
  | { kind: "ready"; result: GeneratedArticle }
  | { kind: "failed"; error: { code: string; message: string }; usage?: TokenUsage | null };

/**
 * Stores the outcome through the one job lifecycle. `attempt` is the run's claim: a run whose
 * claim was taken over (its lease ran out and another worker claimed the article) has lost and
 * writes nothing.
 */
function finishArticle(
  deps: Deps,
  articleId: string,
  outcome: ArticleOutcome,
  attempt: number,
): Promise<boolean> {
  return finishJob(
    deps,
    ARTICLE_JOB,
    articleId,
    async ({ op, record: article, accountId, now }) => {
      const key = keys.article(accountId, articleId);
      if (outcome.kind === "ready") {
        const r = outcome.result;
        let funding = article.funding;
        if (
          r.generator.kind === "builtin_outline" && funding.kind === "credits" &&
          funding.unit !== "article_outline"
        ) {
          // Charged as a model article (the server's writer changed since acceptance) but an
          // outline came back: the outline is free (the catalogue's article_outline is 0), so the
          // whole charge goes back.
          await addRefund(deps.kv, op, {
            accountId,
            funding,
            unit: "articles",
            ref: articleId,
            now,
          });
          funding = { kind: "credits", amount: 0, unit: "article_outline" };
        }
        op.set(
          key,
          {
            ...article,
            funding,
            status: "ready",
            updatedAt: now,
            title: r.title,
            metaDescription: r.meta_description,
            contentMarkdown: r.content_markdown.slice(0, MAX_MARKDOWN_CHARS),
            wordCount: r.word_count,
            qaScore: r.qa_score,
            qa: r.qa,
            generator: r.generator,
            usage: r.usage ?? null,
          } satisfies ArticleRecord,
        );
        return "completed";
      }
      op.set(key, {
        ...ARTICLE_JOB.failed(article, outcome.error, now),
        usage: outcome.usage ?? null,
      });
      return "failed";
    },
    { attempt },
  );
}

/** A URL-safe slug of a title. */
export function slugify(title: string): string {
  return title.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 80) || "article";
}

/**
 * The operator publishes a ready article of a subscribed project. Sandbox and credit-funded
 * articles stay draft-only (403 `publish_not_allowed`); anything but `ready` is 409 `invalid_state`.
 * Records `article.published` in the same commit.
 */
export function publishArticle(
  deps: Deps,
  articleId: string,
  input: { url?: string },
): Promise<ArticleRecord> {
  const { kv, clock } = deps;
  return atomically(kv, async () => {
    const accountId = (await read(kv, keys.articleOwner(articleId))).value;
    if (!accountId) throw new ApiError("not_found", `No article '${articleId}'`);
    const entry = await read(kv, keys.article(accountId, articleId));
    const article = entry.value;
    if (!article) throw new ApiError("not_found", `No article '${articleId}'`);
    if (article.status !== "ready") {
      throw new ApiError(
        "invalid_state",
        `Only ready articles can be published; this one is ${article.status}`,
      );
    }
    const [projectEntry, subEntry] = await readMany(kv, [
      keys.project(accountId, article.projectId),
      keys.subscription(article.projectId),
    ]);
    const now = clock.now();
    if (article.sandbox || article.funding.kind !== "subscription") {
      throw new ApiError(
        "publish_not_allowed",
        "Sandbox and credit-funded articles are draft-only; publishing needs a project subscription",
      );
    }
    if (!isActive(subEntry.value, now)) {
      throw new ApiError("publish_not_allowed", "The project's subscription is not active");
    }
    const slug = slugify(article.title ?? article.topic);
    const base = projectEntry.value?.url.replace(/\/+$/, "") ?? "";
    const published: ArticleRecord = {
      ...article,
      status: "published",
      updatedAt: now,
      publishedAt: now,
      slug,
      url: input.url ?? `${base}/${slug}`,
    };
    const op = atomic(kv).check(entry, subEntry).set(entry.key, published);
    recordEvent(op, deps.queue, {
      accountId,
      event: "article.published",
      now,
      data: {
        article_id: article.id,
        project_id: article.projectId,
        title: published.title ?? article.topic,
        slug,
        language: article.language,
        url: published.url!,
        published_at: new Date(now).toISOString(),
      },
    });
    return { op, result: published };
  });
}
