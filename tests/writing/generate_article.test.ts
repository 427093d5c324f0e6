import assert from "node:assert/strict";
import { createWriter, generateArticle } from "../../domain/writing/generate_article.ts";
import { createBuiltinWriter } from "../../domain/writing/builtin_writer.ts";
import type { Draft, QaFeedback, Writer } from "../../domain/writing/writer.ts";
import { WriterError } from "../../domain/writing/writer.ts";
import { brief, goodArticle } from "./fixtures.ts";

const BAD: Draft = { title: "x", metaDescription: "", markdown: "# x\n\nTODO\n", generator: "t" };

/** A scripted writer recording how it was called. */
function scripted(first: Draft, second: Draft) {
  const calls: { kind: string; feedback?: QaFeedback[] }[] = [];
  const writer: Writer = {
    name: "scripted",
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

Deno.test("generateArticle: the built-in writer passes without revision; stages in order", async () => {
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
  assert.ok(r.qa_score >= 70 && r.qa_score <= 85, String(r.qa_score));
  assert.ok(r.word_count >= 600 && r.word_count <= 1200, String(r.word_count));
  assert.ok(r.meta_description.length >= 120);
  assert.match(r.content_markdown, /^# Running shoes for beginners\n/);
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
