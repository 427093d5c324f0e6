import assert from "node:assert/strict";
import { createWriter, generateArticle } from "../../domain/writing/generate_article.ts";
import { createBuiltinWriter } from "../../domain/writing/builtin_writer.ts";
import type { Draft, QaFeedback, Writer } from "../../domain/writing/writer.ts";
import { WriterError } from "../../domain/writing/writer.ts";
import { brief, goodArticle } from "./fixtures.ts";
import { QA_OUTLINE_CAP } from "../../domain/writing/qa.ts";

const BAD: Draft = {
  title: "x",
  metaDescription: "",
  markdown: "# x\n\nTODO\n",
  generator: { kind: "model", model: "t" },
};

/** A scripted writer recording how it was called. */
function scripted(first: Draft, second: Draft) {
  const calls: { kind: string; feedback?: QaFeedback[] }[] = [];
  const writer: Writer = {
    name: "scripted",
    kind: "model",
    write: () => {
      calls.push({ kind: "write" });
      return Promise.resolve(first);
    },
    revise: (_b, _d, feedback) => {
      calls.push({ kind: "revise", feedback });
      return Promise.resolve(second);
    },
  };
  return { writer, calls };
}

Deno.test("generateArticle: the built-in outline comes back as an outline, low score, no gate", async () => {
  const stages: string[] = [];
  const r = await generateArticle({
    brief: brief(),
    writer: createBuiltinWriter(),
    onStage: (s) => {
      stages.push(s);
      return Promise.resolve();
    },
  });
  assert.deepEqual(stages, ["generating", "qa"]);
  assert.equal(r.revised, false);
  assert.equal(r.title, "Running shoes for beginners");
  assert.deepEqual(r.generator, { kind: "builtin_outline" });
  assert.equal(r.usage, undefined);
  assert.ok(r.qa_score <= QA_OUTLINE_CAP, String(r.qa_score));
  assert.match(r.content_markdown, /^# Running shoes for beginners\n/);
});

Deno.test("generateArticle: a model draft with a placeholder hole is revised with that feedback, not patched", async () => {
  const good = goodArticle();
  const holed: Draft = {
    ...good,
    markdown: good.markdown.replace(
      "Fit matters more than brand, colour or price.",
      "A good pair costs [insert price]. Fit matters more than brand, colour or price.",
    ),
  };
  const { writer, calls } = scripted(holed, good);
  const r = await generateArticle({ brief: brief(), writer });
  assert.equal(r.revised, true);
  const fb = calls[1].feedback!;
  assert.equal(fb[0].id, "no_placeholders");
  assert.match(fb[0].message, /\[insert price\]/);
  assert.doesNotMatch(r.content_markdown, /costs \./);
});

Deno.test("generateArticle: usage of write and revision add up; qa_failed carries it", async () => {
  const usage = (n: number) => ({
    prompt_tokens: n,
    completion_tokens: 2 * n,
    total_tokens: 3 * n,
    calls: 1,
  });
  const { writer } = scripted({ ...BAD, usage: usage(10) }, { ...goodArticle(), usage: usage(5) });
  const r = await generateArticle({ brief: brief(), writer });
  assert.deepEqual(r.usage, {
    prompt_tokens: 15,
    completion_tokens: 30,
    total_tokens: 45,
    calls: 2,
  });
  assert.deepEqual(r.generator, { kind: "model", model: "test" });
  const failing = scripted({ ...BAD, usage: usage(10) }, { ...BAD, usage: usage(1) });
  await assert.rejects(generateArticle({ brief: brief(), writer: failing.writer }), (e) => {
    assert.ok(e instanceof WriterError && e.code === "qa_failed");
    assert.equal((e.details?.usage as { calls: number }).calls, 2);
    return true;
  });
});

Deno.test("generateArticle: an aborted budget ends as generation_timeout", async () => {
  const budget = new AbortController();
  const writer: Writer = {
    name: "slow",
    kind: "model",
    write: (_b, opts) =>
      new Promise((_resolve, reject) => {
        const fail = () => reject(new Error("aborted by signal"));
        if (opts?.signal?.aborted) fail();
        opts?.signal?.addEventListener("abort", fail);
      }),
    revise: () => Promise.reject(new Error("unused")),
  };
  const p = generateArticle({ brief: brief(), writer, signal: budget.signal });
  setTimeout(() => budget.abort(), 5);
  await assert.rejects(p, (e) => e instanceof WriterError && e.code === "generation_timeout");
});

Deno.test("generateArticle: a weak first draft is revised once with the failures as feedback", async () => {
  const { writer, calls } = scripted(BAD, goodArticle());
  const r = await generateArticle({ brief: brief(), writer });
  assert.equal(r.revised, true);
  assert.ok(r.qa_score >= 90);
  assert.deepEqual(calls.map((c) => c.kind), ["write", "revise"]);
  const ids = calls[1].feedback!.map((f) => f.id);
  assert.ok(ids.includes("no_placeholders") && ids.includes("text_length"), ids.join());
});

Deno.test("generateArticle: still under the threshold after revision → qa_failed", async () => {
  const { writer, calls } = scripted(BAD, BAD);
  await assert.rejects(
    generateArticle({ brief: brief(), writer, qaThreshold: 70 }),
    (e) => {
      assert.ok(e instanceof WriterError);
      assert.equal(e.code, "qa_failed");
      assert.match(e.message, /after one revision/);
      assert.ok(typeof e.details?.qa_score === "number");
      return true;
    },
  );
  assert.equal(calls.filter((c) => c.kind === "revise").length, 1);
});

Deno.test("generateArticle: the threshold is configurable", async () => {
  const { writer, calls } = scripted(goodArticle(), goodArticle());
  await assert.rejects(generateArticle({ brief: brief(), writer, qaThreshold: 101 }));
  assert.equal(calls.length, 2);
});

Deno.test("generateArticle: other writer errors become WriterError writer_failed", async () => {
  const writer: Writer = {
    name: "broken",
    kind: "model",
    write: () => Promise.reject(new TypeError("boom")),
    revise: () => Promise.reject(new Error("unused")),
  };
  await assert.rejects(
    generateArticle({ brief: brief(), writer }),
    (e) => e instanceof WriterError && e.code === "writer_failed" && /boom/.test(e.message),
  );
});

Deno.test("generateArticle: an empty topic is an invalid brief", async () => {
  await assert.rejects(
    generateArticle({ brief: brief({ topic: " " }), writer: createBuiltinWriter() }),
    (e) => e instanceof WriterError && e.code === "invalid_brief",
  );
});

Deno.test("createWriter: built-in without a key, model with one (no request made)", () => {
  assert.equal(createWriter({}).name, "builtin");
  assert.equal(createWriter({ openaiApiKey: "" }).name, "builtin");
  const w = createWriter({ openaiApiKey: "k", openaiBaseUrl: "http://127.0.0.1:9/v1" });
  assert.equal(w.name, "model");
});
