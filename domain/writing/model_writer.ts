/**
 * The model writer: drafts an article through any OpenAI-compatible chat-completions endpoint.
 *
 * Outline first, then the introduction, each section and the FAQ in their own calls, because one
 * long call shortens or repeats itself. Every call asks for JSON-schema structured output and is
 * validated here; replies that are not the asked shape count as failures. The SDK's own retries
 * are off so that backoff (429/5xx/timeouts/malformed output) runs through an injectable sleep and
 * ends in one typed {@link WriterError}. Servers that reject `json_schema` get JSON mode instead.
 */

import type OpenAI from "openai";
import { z } from "zod";
import {
  addUsage,
  type ArticleBrief,
  type Draft,
  emptyUsage,
  NOTE_MARKER,
  type QaFeedback,
  type TokenUsage,
  type WriteOptions,
  type Writer,
  WriterError,
} from "./writer.ts";
import { linkCandidates } from "./site_links.ts";
import { repairDraft } from "./repair.ts";
import { describeIssue } from "../platform/mod.ts";

export interface ModelWriterConfig {
  apiKey: string;
  /** e.g. `https://api.openai.com/v1`; any OpenAI-compatible base URL. */
  baseURL?: string;
  model?: string;
  /** Per-request timeout. */
  timeoutMs?: number;
  /** Retries per call after the first attempt (429, 5xx, timeouts, malformed replies). */
  maxRetries?: number;
  /** Injected so tests do not wait for real backoff. */
  sleep?: (ms: number) => Promise<void>;
  /** First backoff step; doubles per attempt, capped at 30 s. */
  backoffBaseMs?: number;
  /**
   * First output token budget per call (`max_completion_tokens`). A reply cut off at the limit
   * (`finish_reason: "length"`) is retried with twice the budget, up to `maxTokensCeiling`.
   */
  maxTokens?: number;
  /** The largest output budget a truncated call is retried with. */
  maxTokensCeiling?: number;
  /** Largest reply body accepted from the endpoint; a bigger one fails the call unread. */
  maxReplyBytes?: number;
  /** The fetch the SDK uses (tests inject one); the reply-size cap wraps it. */
  fetch?: typeof fetch;
}

export const DEFAULT_MAX_TOKENS = 4096;
export const MAX_TOKENS_CEILING = 16_384;
/** 2 MiB: a 16k-token JSON reply is well under 200 KB; anything far bigger is not an answer. */
export const MAX_REPLY_BYTES = 2 * 1024 * 1024;

export const DEFAULT_MODEL = "gpt-4o-mini";

const Outline = z.object({
  title: z.string(),
  meta_description: z.string().min(1),
  sections: z.array(z.object({
    heading: z.string().min(1),
    subheadings: z.array(z.string()),
    key_points: z.array(z.string()),
    link_urls: z.array(z.string()),
  })).min(2),
  faq_heading: z.string().min(1),
  faq_questions: z.array(z.string()),
});
type Outline = z.infer<typeof Outline>;

const Section = z.object({ markdown: z.string().min(1) });

const Revision = z.object({
  title: z.string(),
  meta_description: z.string().min(1),
  markdown: z.string().min(1),
});

type Message = { role: "system" | "user"; content: string };

/** The SDK's client class: `openai`'s default export. */
type Sdk = typeof OpenAI;

/** Creates the model-backed writer. No request is made until `write` is called. */
export function createModelWriter(config: ModelWriterConfig): Writer {
  const model = config.model || DEFAULT_MODEL;
  const maxRetries = config.maxRetries ?? 3;
  const sleep = config.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const baseDelay = config.backoffBaseMs ?? 1000;
  const ceiling = Math.max(config.maxTokensCeiling ?? MAX_TOKENS_CEILING, config.maxTokens ?? 0);
  let client: OpenAI | null = null;
  /** Flips to JSON mode once the server says it does not know `json_schema`. */
  let jsonSchemaSupported = true;

  /** One article's calls: the abort signal of its time budget and the tokens they spent. */
  interface Run {
    signal?: AbortSignal;
    usage: TokenUsage;
  }

  async function callIn<T>(
    run: Run,
    name: string,
    schema: z.ZodType<T>,
    messages: Message[],
  ): Promise<T> {
    const jsonSchema = strictJsonSchema(schema);
    // The SDK loads with the first model call, not with the process: it held ~6 MiB of every
    // process's memory (with nodemailer, ~11 MiB of a worker child's RSS), and most never write.
    const Sdk: Sdk = (await import("openai")).default;
    client ??= new Sdk({
      apiKey: config.apiKey,
      baseURL: config.baseURL || undefined,
      timeout: config.timeoutMs ?? 120_000,
      maxRetries: 0,
      fetch: cappedFetch(config.fetch ?? fetch, config.maxReplyBytes ?? MAX_REPLY_BYTES),
    });
    let lastError: WriterError | null = null;
    let maxTokens = config.maxTokens ?? DEFAULT_MAX_TOKENS;
    for (let attempt = 0; attempt <= maxRetries; attempt++) {
      if (attempt > 0) await abortableSleep(sleep, backoff(attempt, baseDelay, lastError), run);
      throwIfAborted(run, name);
      const useSchema = jsonSchemaSupported;
      const msgs = useSchema ? messages : withSchemaHint(messages, jsonSchema);
      try {
        const res = await client.chat.completions.create({
          model,
          messages: msgs,
          // Reasoning models refuse the deprecated `max_tokens`; every current server takes this.
          max_completion_tokens: maxTokens,
          response_format: useSchema
            ? { type: "json_schema", json_schema: { name, strict: true, schema: jsonSchema } }
            : { type: "json_object" },
        }, { signal: run.signal ?? undefined });
        run.usage = addUsage(run.usage, usageOf(res));
        return parseReply(res, schema, name);
      } catch (e) {
        throwIfAborted(run, name);
        if (useSchema && isSchemaUnsupported(e, Sdk)) {
          jsonSchemaSupported = false;
          attempt--; // the switch itself is not a failed attempt
          continue;
        }
        lastError = toWriterError(e, name, Sdk);
        if (lastError.details?.truncated) {
          // The same budget would be cut off again: retry with a larger one, or give up.
          if (maxTokens >= ceiling) {
            lastError = new WriterError(
              "model_malformed",
              `Model call ${name}: the reply was cut off even at ${maxTokens} output tokens.`,
              { retryable: false, truncated: true, max_completion_tokens: maxTokens },
            );
            break;
          }
          maxTokens = Math.min(ceiling, maxTokens * 2);
        }
        if (!lastError.details?.retryable) break;
      }
    }
    throw new WriterError(
      lastError!.code,
      `${lastError!.message} (gave up after ${maxRetries + 1} attempt(s))`,
      { ...lastError!.details, call: name, usage: run.usage },
      { cause: lastError },
    );
  }

  return {
    name: "model",
    kind: "model",
    async write(brief: ArticleBrief, options?: WriteOptions): Promise<Draft> {
      const run: Run = { signal: options?.signal, usage: emptyUsage() };
      const call = <T>(name: string, schema: z.ZodType<T>, messages: Message[]) =>
        callIn(run, name, schema, messages);
      const system = systemPrompt(brief);
      const facts = factsBlock(brief);
      const outline = await call("article_outline", Outline, [
        { role: "system", content: system },
        { role: "user", content: outlinePrompt(brief, facts) },
      ]);
      const plan = outlineSummary(outline);
      const parts: string[] = [`# ${brief.topic.trim()}`, ""];
      const intro = await call("article_section", Section, [
        { role: "system", content: system },
        { role: "user", content: introPrompt(brief, facts, plan) },
      ]);
      parts.push(stripLeadingHeading(intro.markdown), "");
      for (const section of outline.sections) {
        const body = await call("article_section", Section, [
          { role: "system", content: system },
          { role: "user", content: sectionPrompt(brief, facts, plan, section) },
        ]);
        parts.push(`## ${oneLine(section.heading)}`, "", stripLeadingHeading(body.markdown), "");
      }
      if (outline.faq_questions.length) {
        const faq = await call("article_section", Section, [
          { role: "system", content: system },
          { role: "user", content: faqPrompt(brief, facts, outline) },
        ]);
        parts.push(`## ${oneLine(outline.faq_heading)}`, "", stripLeadingHeading(faq.markdown), "");
      }
      return {
        ...repairDraft({
          // The topic is the planned title verbatim (interface contract); the model's is advisory.
          title: brief.topic.trim(),
          metaDescription: oneLine(outline.meta_description),
          markdown: parts.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n",
          generator: { kind: "model", model },
        }, brief),
        usage: run.usage,
      };
    },
    async revise(
      brief: ArticleBrief,
      draft: Draft,
      feedback: QaFeedback[],
      options?: WriteOptions,
    ): Promise<Draft> {
      const run: Run = { signal: options?.signal, usage: emptyUsage() };
      const r = await callIn(run, "article_revision", Revision, [
        { role: "system", content: systemPrompt(brief) },
        { role: "user", content: revisePrompt(brief, factsBlock(brief), draft, feedback) },
      ]);
      let markdown = r.markdown.trim();
      if (!/^#\s/.test(markdown)) markdown = `# ${brief.topic.trim()}\n\n${markdown}`;
      return {
        ...repairDraft({
          title: brief.topic.trim(),
          metaDescription: oneLine(r.meta_description),
          markdown: markdown + "\n",
          generator: { kind: "model", model },
        }, brief),
        usage: run.usage,
      };
    },
  };
}

/** The `usage` block of a chat completion, when the server sent one. */
function usageOf(res: unknown): TokenUsage | undefined {
  const u = (res as { usage?: Record<string, unknown> } | null)?.usage;
  if (!u || typeof u !== "object") return undefined;
  const n = (x: unknown) => (typeof x === "number" && Number.isFinite(x) && x >= 0 ? x : 0);
  const prompt = n(u.prompt_tokens);
  const completion = n(u.completion_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: n(u.total_tokens) || prompt + completion,
    calls: 1,
  };
}

function throwIfAborted(run: { signal?: AbortSignal }, name: string): void {
  if (run.signal?.aborted) {
    throw new WriterError(
      "generation_timeout",
      `The article ran out of its time budget during model call ${name}; generation was aborted.`,
      { retryable: false },
    );
  }
}

/** The injected sleep, cut short when the article's budget runs out. */
function abortableSleep(
  sleep: (ms: number) => Promise<void>,
  ms: number,
  run: { signal?: AbortSignal },
): Promise<void> {
  const signal = run.signal;
  if (!signal) return sleep(ms);
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done);
    sleep(ms).then(done, (e) => {
      signal.removeEventListener("abort", done);
      reject(e);
    });
  });
}

/** Thrown by the capped body stream; `toWriterError` turns it into a non-retryable failure. */
export class ReplyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the model's reply is larger than ${limit} bytes`);
    this.name = "ReplyTooLargeError";
  }
}

/**
 * A fetch whose response body errors after `limit` bytes (and at once when Content-Length says
 * more), so a runaway or hostile endpoint cannot make the SDK buffer an unbounded reply.
 */
export function cappedFetch(inner: typeof fetch, limit: number): typeof fetch {
  return async (input, init) => {
    const res = await inner(input, init);
    const declared = Number(res.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > limit) {
      await res.body?.cancel();
      throw new ReplyTooLargeError(limit);
    }
    if (!res.body) return res;
    let seen = 0;
    const body = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctrl) {
          seen += chunk.byteLength;
          if (seen > limit) ctrl.error(new ReplyTooLargeError(limit));
          else ctrl.enqueue(chunk);
        },
      }),
    );
    return new Response(body, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

// ---- transport helpers -------------------------------------------------------------------

function parseReply<T>(res: unknown, schema: z.ZodType<T>, name: string): T {
  const choice =
    (res as { choices?: { message?: { content?: unknown }; finish_reason?: string }[] })
      ?.choices?.[0];
  if (!choice) throw malformed(name, "the reply has no choices");
  if (choice.finish_reason === "length") {
    throw new WriterError(
      "model_malformed",
      `Model call ${name}: the reply was cut off at the token limit.`,
      { retryable: true, truncated: true },
    );
  }
  const content = choice.message?.content;
  if (typeof content !== "string" || !content.trim()) throw malformed(name, "the reply is empty");
  let json: unknown;
  try {
    json = JSON.parse(content.trim().replace(/^```(?:json)?\s*|\s*```$/g, ""));
  } catch {
    throw malformed(name, "the reply is not valid JSON");
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = describeIssue(parsed.error.issues, "", "invalid");
    throw malformed(name, `the reply does not match the schema (${issue})`);
  }
  return parsed.data;
}

function malformed(name: string, why: string): WriterError {
  return new WriterError("model_malformed", `Model call ${name}: ${why}.`, { retryable: true });
}

function toWriterError(e: unknown, name: string, OpenAI: Sdk): WriterError {
  if (e instanceof WriterError) return e;
  const tooLarge = causes(e).find((c) => c instanceof ReplyTooLargeError);
  if (tooLarge) {
    return new WriterError(
      "model_failed",
      `Model call ${name}: the reply is larger than the ${tooLarge.limit}-byte cap.`,
      { retryable: false },
    );
  }
  if (e instanceof OpenAI.APIConnectionTimeoutError) {
    return new WriterError("model_failed", `Model call ${name} timed out.`, { retryable: true });
  }
  if (e instanceof OpenAI.APIConnectionError) {
    return new WriterError("model_failed", `Model call ${name} could not connect.`, {
      retryable: true,
    });
  }
  if (e instanceof OpenAI.APIError) {
    const status = e.status ?? 0;
    const retryable = status === 429 || status === 408 || status >= 500;
    const retryAfter = Number(e.headers?.get?.("retry-after"));
    return new WriterError(
      "model_failed",
      `Model call ${name} failed with HTTP ${status}: ${e.message.slice(0, 200)}`,
      { retryable, status, retryAfterMs: Number.isFinite(retryAfter) ? retryAfter * 1000 : null },
    );
  }
  return new WriterError("model_failed", `Model call ${name} failed: ${String(e).slice(0, 200)}`, {
    retryable: false,
  });
}

/** An error and its `cause` chain (the SDK wraps body-read failures). */
function causes(e: unknown): unknown[] {
  const out: unknown[] = [];
  for (let c = e, i = 0; c && i < 5; c = (c as { cause?: unknown }).cause, i++) out.push(c);
  return out;
}

/** Exponential backoff (base × 2^(attempt−1), ≤ 30 s), or the server's Retry-After if longer. */
function backoff(attempt: number, base: number, last: WriterError | null): number {
  const exp = Math.min(30_000, base * 2 ** (attempt - 1));
  const after = last?.details?.retryAfterMs;
  return typeof after === "number" && after > exp ? Math.min(after, 60_000) : exp;
}

function isSchemaUnsupported(e: unknown, OpenAI: Sdk): boolean {
  return e instanceof OpenAI.APIError && (e.status === 400 || e.status === 422) &&
    /response_format|json_schema/i.test(e.message);
}

/** Strict structured output wants every object closed; zod leaves that open unless told. */
function strictJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<
    string,
    unknown
  >;
  const close = (node: unknown): void => {
    if (!node || typeof node !== "object") return;
    const n = node as Record<string, unknown>;
    // Length limits are not portable across servers; they are checked here instead.
    delete n.minLength;
    delete n.minItems;
    delete n.maxItems;
    if (n.type === "object") {
      n.additionalProperties = false;
      n.required = Object.keys((n.properties as object) ?? {});
    }
    for (const v of Object.values(n)) {
      if (Array.isArray(v)) v.forEach(close);
      else close(v);
    }
  };
  close(rest);
  return rest;
}

function withSchemaHint(messages: Message[], schema: unknown): Message[] {
  const hint = `Answer with one JSON object only, matching this JSON schema: ${
    JSON.stringify(schema)
  }`;
  return [...messages, { role: "system", content: hint }];
}

// ---- prompts -----------------------------------------------------------------------------

function systemPrompt(b: ArticleBrief): string {
  return [
    `You write SEO articles for the website ${b.siteFacts.host}.`,
    `Write in the language "${b.language}" for readers in the country "${b.country}".`,
    `Primary keyword: "${b.primaryKeyword}".`,
    "Rules:",
    "- Use only the facts given in the brief and the site pages. Never invent numbers, prices, " +
    "dates, names, quotes, studies, testimonials or sources.",
    `- Where a fact is needed but not given, write an editor's note as a markdown blockquote ` +
    `starting with "${NOTE_MARKER}" that says what the owner must add. Never use placeholders ` +
    "such as [insert ...], TODO or {{...}}.",
    "- Link only to the site page URLs listed in the brief, with descriptive anchor text that is " +
    "never exactly the keyword. No other links.",
    "- Short sentences (mostly under 20 words) and short paragraphs (under 120 words). " +
    "Do not repeat sentences. Use the keyword naturally, about once per 100–150 words.",
    "- Return markdown inside the JSON field asked for; no HTML.",
  ].join("\n");
}

function factsBlock(b: ArticleBrief): string {
  const pages = linkCandidates(b, 12);
  if (!pages.length) return "Site pages: none known. Do not add links.";
  return "Site pages (the only allowed link targets and the only site facts):\n" +
    pages.map((p) => `- ${p.url} | ${p.anchor}${p.description ? ` | ${p.description}` : ""}`)
      .join("\n");
}

function outlinePrompt(b: ArticleBrief, facts: string): string {
  return [
    `Plan an article. Title, exactly: "${b.topic.trim()}".`,
    facts,
    "Return: title (the title above, unchanged); meta_description (120–156 characters, " +
    "containing the keyword once); sections (5 to 7 H2 sections in reading order, the last one a " +
    "conclusion; about half of the headings contain the keyword; each with optional H3 " +
    "subheadings, 2–5 key points and the site page URLs it should link to); faq_heading; " +
    "faq_questions (3 to 5 questions readers ask).",
    "Aim for 900 to 1,500 words in total.",
  ].join("\n\n");
}

function outlineSummary(o: Outline): string {
  return "Outline:\n" + o.sections.map((s, i) => `${i + 1}. ${s.heading}`).join("\n");
}

function introPrompt(b: ArticleBrief, facts: string, plan: string): string {
  return [
    `Write the introduction of the article "${b.topic.trim()}": 2 short paragraphs, ` +
    `80–150 words, the keyword "${b.primaryKeyword}" in the first sentence. No heading.`,
    plan,
    facts,
    'Return {"markdown": "..."}.',
  ].join("\n\n");
}

function sectionPrompt(
  b: ArticleBrief,
  facts: string,
  plan: string,
  s: Outline["sections"][number],
): string {
  return [
    `Write the body of the section "${s.heading}" of the article "${b.topic.trim()}": ` +
    "120–250 words. Do not repeat the section heading; use these H3 subheadings (###) if any: " +
    `${s.subheadings.map((h) => `"${h}"`).join(", ") || "none"}.`,
    `Key points: ${s.key_points.join("; ") || "(choose)"}.`,
    `Link to: ${s.link_urls.join(", ") || "nothing unless a listed page fits"}.`,
    plan,
    facts,
    'Return {"markdown": "..."}.',
  ].join("\n\n");
}

function faqPrompt(b: ArticleBrief, facts: string, o: Outline): string {
  return [
    `Write the FAQ of the article "${b.topic.trim()}". Each question as an H3 (###) followed by ` +
    "a 2–4 sentence answer. Do not repeat the section heading.",
    `Questions: ${o.faq_questions.map((q) => `"${q}"`).join(", ")}.`,
    facts,
    'Return {"markdown": "..."}.',
  ].join("\n\n");
}

function revisePrompt(b: ArticleBrief, facts: string, d: Draft, feedback: QaFeedback[]): string {
  return [
    "Revise this article so it passes the quality checks below. Keep the title, keep every " +
    "fact sourced from the brief, keep editor's notes where facts are still missing, and change " +
    "only what the checks need.",
    `Failed checks:\n${feedback.map((f) => `- ${f.id}: ${f.message}`).join("\n") || "- none"}`,
    facts,
    `Meta description:\n${d.metaDescription}`,
    `Article markdown:\n${d.markdown}`,
    `Return {"title": "${b.topic.trim()}", "meta_description": "...", "markdown": "..."} with ` +
    "the whole revised article in markdown, starting with the H1 title.",
  ].join("\n\n");
}

function stripLeadingHeading(md: string): string {
  return md.trim().replace(/^#{1,2}\s+[^\n]*\n+/, "").trim();
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}
