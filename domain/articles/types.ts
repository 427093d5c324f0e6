/**
 * Persisted shapes of articles: the article record and the site facts it is written from.
 *
 * A leaf: it imports only other capabilities' `types.ts`, so the key table (domain/platform/store.ts)
 * depends on no module with code.
 *
 * @module
 */
import type { ArticleBrief, GeneratorInfo, QaReport, TokenUsage } from "../writing/types.ts";
import type { Funding } from "../billing/types.ts";

export interface ArticleRecord {
  id: string;
  accountId: string;
  projectId: string;
  status: ArticleStatus;
  topic: string;
  primaryKeyword: string;
  language: string;
  country: string;
  sandbox: boolean;
  funding: Funding;
  createdAt: number;
  updatedAt: number;
  title: string | null;
  metaDescription: string | null;
  contentMarkdown: string | null;
  wordCount: number | null;
  qaScore: number | null;
  /** The QA assessments behind the score; absent on records older than the field. */
  qa?: QaReport | null;
  /** How it was written (set when generation ends); absent on records older than the field. */
  generator?: GeneratorInfo | null;
  /** Model tokens spent on it, also when it failed; null without a model. */
  usage?: TokenUsage | null;
  error: { code: string; message: string } | null;
  attempts: number;
  leaseUntil: number;
  publishedAt: number | null;
  slug: string | null;
  url: string | null;
}

/** What the latest completed audit learnt about a project's site (written by its completion). */
export interface SiteFactsRecord {
  host: string;
  language: string | null;
  pages: ArticleBrief["siteFacts"]["pages"];
}

export type ArticleStatus = "queued" | "generating" | "qa" | "ready" | "failed" | "published";
