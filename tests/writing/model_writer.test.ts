import assert from "node:assert/strict";
import {
  cappedFetch,
  createModelWriter,
  ReplyTooLargeError,
} from "../../domain/writing/model_writer.ts";
import { generateArticle } from "../../domain/writing/generate_article.ts";
import { WriterError } from "../../domain/writing/writer.ts";
import { schemaName, startFakeOpenAI, userText } from "./fake_openai.ts";
import { brief, GOOD_MARKDOWN, HOST } from "./fixtures.ts";
import { KW, OUTLINE, scriptedModel } from "./scripted_model.ts";

/** A well-behaved model: answers each call with content that passes QA. */
const goodModel = scriptedModel({
  introLinks: `Start with our [fitting guide](https://${HOST}/guides/fit) or browse ` +
    `[trail shoes](https://${HOST}/shop/trail).`,
  revision: {
    title: "ignored",
    markdown: `# Running shoes for beginners\n\nRevised text on ${KW}. See the ` +
      `[made-up page](https://${HOST}/nowhere) and [fit guide](https://${HOST}/guides/fit).\n`,
  },
});

function fastWriter(baseURL: string, extra: Partial<Parameters<typeof createModelWriter>[0]> = {}) {
  const sleeps: number[] = [];
  const writer = createModelWriter({
    apiKey: "test-key",
    baseURL,
    model: "fake-model-1",
    maxRetries: 2,
    timeoutMs: 5_000,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    ...extra,
  });
  return { writer, sleeps };
}

async function rejectsWith(p: Promise<unknown>, code: string): Promise<WriterError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof WriterError, `expected WriterError, got ${e}`);
    assert.equal(e.code, code, e.message);
    return e;
  }
  throw new Error(`expected WriterError ${code}, but it resolved`);
}

Deno.test("model writer: outline then sections, structured output, passes QA", async () => {
  const fake = startFakeOpenAI((body) => goodModel(body));
  try {
    const { writer, sleeps } = fastWriter(fake.baseURL);
    const result = await generateArticle({ brief: brief(), writer });
    assert.equal(result.title, "Running shoes for beginners");
    assert.ok(result.qa_score >= 70, `qa ${result.qa_score}`);
    assert.equal(result.revised, false);
    assert.deepEqual(result.generator, { kind: "model", model: "fake-model-1" });
    // The fake reports 10 prompt + 20 completion tokens per call: 8 calls.
    assert.deepEqual(result.usage, {
      prompt_tokens: 80,
      completion_tokens: 160,
      total_tokens: 240,
      calls: 8,
    });
    assert.match(result.content_markdown, /^# Running shoes for beginners\n/);
    assert.match(result.content_markdown, /## Running shoes and comfort/);
    assert.match(result.content_markdown, /\]\(https:\/\/shoes\.example\/guides\/fit\)/);
    assert.equal(sleeps.length, 0);

    // 1 outline + 1 intro + 5 sections + 1 FAQ, in that order.
    assert.equal(fake.requests.length, 8);
    const first = fake.requests[0];
    assert.equal(first.auth, "Bearer test-key");
    assert.equal(first.body.model, "fake-model-1");
    // Reasoning models refuse `max_tokens`; the writer only sends `max_completion_tokens`.
    assert.equal(first.body.max_completion_tokens, 4096);
    assert.equal("max_tokens" in first.body, false);
    assert.equal(first.body.response_format.type, "json_schema");
    assert.equal(first.body.response_format.json_schema.name, "article_outline");
    assert.equal(first.body.response_format.json_schema.strict, true);
    const schema = first.body.response_format.json_schema.schema;
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual(schema.required.sort(), Object.keys(OUTLINE).sort());
    assert.equal(schema.properties.sections.items.additionalProperties, false);
    assert.equal(schemaName(fake.requests[1].body), "article_section");
    // Language, country and the real site pages reach the prompt.
    const system = first.body.messages[0].content as string;
    assert.match(system, /language "en"/);
    assert.match(system, /country "GB"/);
    assert.match(userText(first.body), /https:\/\/shoes\.example\/guides\/fit/);
  } finally {
    await fake.close();
  }
});

Deno.test("model writer: malformed JSON every time → WriterError model_malformed", async () => {
  const fake = startFakeOpenAI(() => ({ content: "{not json" }));
  try {
    const { writer, sleeps } = fastWriter(fake.baseURL);
    const e = await rejectsWith(writer.write(brief()), "model_malformed");
    assert.match(e.message, /not valid JSON/);
    assert.equal(fake.requests.length, 3); // first try + maxRetries 2
    assert.equal(sleeps.length, 2);
  } finally {
    await fake.close();
  }
});

Deno.test("model writer: valid JSON of the wrong shape → model_malformed", async () => {
  const fake = startFakeOpenAI(() => ({ content: JSON.stringify({ hello: "world" }) }));
  try {
    const { writer } = fastWriter(fake.baseURL, { maxRetries: 0 });
    const e = await rejectsWith(writer.write(brief()), "model_malformed");
    assert.match(e.message, /does not match the schema/);
    assert.equal(fake.requests.length, 1);
  } finally {
    await fake.close();
  }
});

Deno.test("model writer: truncated reply (finish_reason length) is retried with a larger limit", async () => {
  // Cut off while the budget is under 8192 tokens; a complete answer once it is.
  const fake = startFakeOpenAI((body) =>
    body.max_completion_tokens < 8192
      ? { content: '{"title": "Run', finishReason: "length" }
      : goodModel(body)
  );
  try {
    const { writer } = fastWriter(fake.baseURL, { maxRetries: 2 });
    const draft = await writer.write(brief());
    assert.match(draft.markdown, /## Getting the fit right/);
    const limits = fake.requests.map((r) => r.body.max_completion_tokens);
    assert.deepEqual(limits.slice(0, 2), [4096, 8192], "not the same limit again");
    // Every later call starts at the first budget again and is cut off once.
    assert.equal(fake.requests.length, 16);
  } finally {
    await fake.close();
  }
});

Deno.test("model writer: cut off even at the ceiling → model_malformed, no pointless retries", async () => {
  const fake = startFakeOpenAI(() => ({ content: '{"title": "Run', finishReason: "length" }));
  try {
    const { writer } = fastWriter(fake.baseURL, {
      maxRetries: 5,
      maxTokens: 1000,
      maxTokensCeiling: 4000,
    });
    const e = await rejectsWith(writer.write(brief()), "model_malformed");
    assert.match(e.message, /cut off even at 4000 output tokens/);
    assert.deepEqual(fake.requests.map((r) => r.body.max_completion_tokens), [1000, 2000, 4000]);
    // The failed calls still cost tokens, and the error says how many.
    assert.equal((e.details?.usage as { calls: number }).calls, 3);
  } finally {
    await fake.close();
  }
});

Deno.test("model writer: the article budget aborts an in-flight call and stops", async () => {
  let aborted = 0;
  const fake = startFakeOpenAI(() => ({ delayMs: 3_000, then: { content: "{}" } }));
  try {
    const { writer } = fastWriter(fake.baseURL, {
      maxRetries: 3,
      timeoutMs: 10_000,
      fetch: (input, init) => {
        init?.signal?.addEventListener("abort", () => aborted++);
        return fetch(input, init);
      },
    });
    const budget = new AbortController();
    const t0 = performance.now();
    setTimeout(() => budget.abort(), 100);
    const e = await rejectsWith(
      generateArticle({ brief: brief(), writer, signal: budget.signal }),
      "generation_timeout",
    );
    assert.ok(performance.now() - t0 < 2_000, "did not wait for the model");
    assert.equal(fake.requests.length, 1, "no retry after the budget ran out");
    assert.equal(aborted, 1, "the request itself was aborted");
    assert.match(e.message, /time budget/);
  } finally {
    await fake.close();
  }
});

Deno.test("model writer: a reply body over the cap fails unread, without retries", async () => {
  const big = "x".repeat(64 * 1024);
  const fake = startFakeOpenAI(() => ({ content: JSON.stringify({ markdown: big }) }));
  try {
    const { writer } = fastWriter(fake.baseURL, { maxReplyBytes: 16 * 1024 });
    const e = await rejectsWith(writer.write(brief()), "model_failed");
    assert.match(e.message, /larger than the 16384-byte cap/);
    assert.equal(fake.requests.length, 1);
  } finally {
    await fake.close();
  }
});

Deno.test("cappedFetch: a streamed body without Content-Length is cut at the cap", async () => {
  const chunks = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < 10; i++) c.enqueue(new Uint8Array(1024));
      c.close();
    },
  });
  const inner = () => Promise.resolve(new Response(chunks));
  const res = await cappedFetch(inner as typeof fetch, 4096)("http://x.invalid/");
  await assert.rejects(res.arrayBuffer(), (e) => e instanceof ReplyTooLargeError);
  const small = await cappedFetch(
    (() => Promise.resolve(new Response("ok"))) as unknown as typeof fetch,
    4096,
  )("http://x.invalid/");
  assert.equal(await small.text(), "ok");
});

Deno.test("model writer: 429 then success retries with backoff", async () => {
  const fake = startFakeOpenAI((body, i) =>
    i === 0 ? { status: 429, headers: { "retry-after": "3" } } : goodModel(body)
  );
  try {
    const { writer, sleeps } = fastWriter(fake.baseURL);
    const draft = await writer.write(brief());
    assert.equal(draft.title, "Running shoes for beginners");
    assert.deepEqual(draft.generator, { kind: "model", model: "fake-model-1" });
    assert.equal(fake.requests.length, 9); // one 429 + 8 successful calls
    assert.deepEqual(sleeps, [3000]); // Retry-After beats the 1 s first backoff step
  } finally {
    await fake.close();
  }
});

Deno.test("model writer: 500 every time → WriterError model_failed after the retry budget", async () => {
  const fake = startFakeOpenAI(() => ({ status: 500 }));
  try {
    const { writer, sleeps } = fastWriter(fake.baseURL, { maxRetries: 3 });
    const e = await rejectsWith(
      generateArticle({ brief: brief(), writer }),
      "model_failed",
    );
    assert.match(e.message, /HTTP 500/);
    assert.match(e.message, /4 attempt/);
    assert.equal(e.details?.status, 500);
    assert.equal(fake.requests.length, 4);
    assert.deepEqual(sleeps, [1000, 2000, 4000]);
  } finally {
    await fake.close();
  }
});

Deno.test("model writer: 401 is not retried", async () => {
  const fake = startFakeOpenAI(() => ({ status: 401 }));
  try {
    const { writer, sleeps } = fastWriter(fake.baseURL);
    await rejectsWith(writer.write(brief()), "model_failed");
    assert.equal(fake.requests.length, 1);
    assert.equal(sleeps.length, 0);
  } finally {
    await fake.close();
  }
});

Deno.test("model writer: a server without json_schema gets JSON mode", async () => {
  const fake = startFakeOpenAI((body) =>
    body.response_format?.type === "json_schema"
      ? { status: 400, body: { error: { message: "response_format json_schema not supported" } } }
      : goodModel({
        ...body,
        response_format: {
          json_schema: {
            name: /Plan an article/.test(userText(body)) ? "article_outline" : "article_section",
          },
        },
      })
  );
  try {
    const { writer, sleeps } = fastWriter(fake.baseURL);
    const draft = await writer.write(brief());
    assert.match(draft.markdown, /## Getting the fit right/);
    assert.equal(fake.requests[1].body.response_format.type, "json_object");
    assert.match(JSON.stringify(fake.requests[1].body.messages), /matching this JSON schema/);
    assert.equal(fake.requests.length, 9); // one refusal, then 8 calls in JSON mode
    assert.equal(sleeps.length, 0);
  } finally {
    await fake.close();
  }
});

Deno.test("model writer: a reply slower than the timeout fails as model_failed", async () => {
  const fake = startFakeOpenAI(() => ({ delayMs: 2_000, then: { content: "{}" } }));
  try {
    const { writer } = fastWriter(fake.baseURL, { maxRetries: 0, timeoutMs: 100 });
    const e = await rejectsWith(writer.write(brief()), "model_failed");
    assert.match(e.message, /timed out/);
  } finally {
    await fake.close();
  }
});

Deno.test("model writer: revise sends the failed checks and unlinks unknown pages", async () => {
  const fake = startFakeOpenAI((body) => goodModel(body));
  try {
    const { writer } = fastWriter(fake.baseURL);
    const b = brief();
    const revised = await writer.revise(
      b,
      {
        title: b.topic,
        metaDescription: "x",
        markdown: "# x\n",
        generator: { kind: "model", model: "x" },
      },
      [{ id: "text_length", message: "The body has only 10 words." }],
    );
    assert.equal(revised.title, "Running shoes for beginners");
    assert.ok(!revised.markdown.includes("/nowhere"));
    assert.match(revised.markdown, /made-up page/);
    assert.match(revised.markdown, /\[fit guide\]\(https:\/\/shoes\.example\/guides\/fit\)/);
    assert.match(userText(fake.requests[0].body), /text_length: The body has only 10 words/);
  } finally {
    await fake.close();
  }
});

Deno.test("model writer: a placeholder reaches QA as written; the revision gets it as feedback", async () => {
  const holed = scriptedModel({
    introLinks: "A good first pair costs [insert price].",
    revision: {
      title: OUTLINE.title,
      markdown: `# ${OUTLINE.title}\n\n${GOOD_MARKDOWN.replace(/^# .*\n/, "")}`,
    },
  });
  const fake = startFakeOpenAI((body) => holed(body));
  try {
    const { writer } = fastWriter(fake.baseURL);
    const result = await generateArticle({ brief: brief(), writer });
    assert.equal(result.revised, true);
    const revision = fake.requests.find((r) => schemaName(r.body) === "article_revision")!;
    const prompt = userText(revision.body);
    assert.match(prompt, /no_placeholders: A leftover placeholder remains: "\[insert price\]"/);
    // The draft it was asked to revise still had the hole, not "costs ."
    assert.match(prompt, /costs \[insert price\]\./);
    assert.doesNotMatch(result.content_markdown, /insert price|costs \./);
    assert.equal(result.usage?.calls, 9, "8 calls for the draft, 1 for the revision");
  } finally {
    await fake.close();
  }
});
