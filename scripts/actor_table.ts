/**
 * Prints the README's actor table, or with `--write` puts it between the README's markers.
 *
 * @example
 * ```sh
 * deno run --allow-read --allow-write scripts/actor_table.ts --write
 * ```
 *
 * @module
 */
import { ACTOR_TABLE_END, ACTOR_TABLE_START, actorTable } from "../app/actor_table.ts";
import { OPERATIONS } from "../app/operations/index.ts";

const table = actorTable(OPERATIONS);
if (Deno.args.includes("--write")) {
  const path = new URL("../README.md", import.meta.url);
  const readme = await Deno.readTextFile(path);
  const start = readme.indexOf(ACTOR_TABLE_START);
  const end = readme.indexOf(ACTOR_TABLE_END);
  if (start < 0 || end < start) throw new Error("README.md has no actor-table markers");
  const next = readme.slice(0, start + ACTOR_TABLE_START.length) + "\n\n" + table + "\n\n" +
    readme.slice(end);
  await Deno.writeTextFile(path, next);
} else {
  console.log(table);
}
