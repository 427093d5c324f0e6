/**
 * The store schema (domain/platform/store.ts): it names every key builder of kv/keys.ts and nothing else,
 * records and their indexes name each other, and the typed keys are the layout's builders.
 */
import assert from "node:assert/strict";
import { keys as layout } from "../../kv/keys.ts";
import { keys, schema } from "../../domain/platform/store.ts";

type Families = Record<
  string,
  { role: string; indexes?: readonly string[]; of?: readonly string[] }
>;
const families: Families = schema;

Deno.test("store schema: one family per key builder, and the typed keys are the builders", () => {
  assert.deepEqual(Object.keys(schema).sort(), Object.keys(layout).sort());
  assert.equal(keys, layout);
});

Deno.test("store schema: a record's indexes point back at it, and every index is listed", () => {
  for (const [name, f] of Object.entries(families)) {
    for (const i of f.indexes ?? []) {
      assert.equal(families[i]?.role, "index", `${name} lists ${i}, which is no index`);
      assert.ok(families[i].of?.includes(name), `${i} does not point at ${name}`);
    }
    if (f.role === "index") {
      assert.ok(f.of && f.of.length > 0, `${name} points at nothing`);
      for (const r of f.of) {
        assert.equal(families[r]?.role, "record", `${name} points at ${r}, which is no record`);
        assert.ok(families[r].indexes?.includes(name), `${r} does not list its index ${name}`);
      }
    }
    if (f.role === "prefix") {
      assert.equal(f.of?.length, 1, `${name} lists one family`);
      const listed = families[f.of![0]];
      assert.ok(listed && listed.role !== "prefix", `${name} lists ${f.of![0]}, no key family`);
    }
  }
});
