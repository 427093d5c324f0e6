/**
 * A process that runs jobs from KV's queue starts an audit it created at once (the queue port's
 * `kick`), not when the queue delivers the message, which stays the fallback: here the queue
 * delivers nothing at all, and the audit still runs to its end, exactly once.
 */
import assert from "node:assert/strict";
import { withApp } from "../helpers/app.ts";
import { completedLiveAudit } from "../helpers/credits.ts";
import { openTestKv } from "../helpers/kv.ts";
import { html, page, serveSite } from "../helpers/sites.ts";

/** `kv` whose queue takes every message and delivers none (each is dropped as handled). */
function deafQueue(kv: Deno.Kv): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "listenQueue") return () => target.listenQueue(() => {});
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

Deno.test("an audit starts at once in the process that created it, without the queue's delivery", async () => {
  const site = serveSite((p) => {
    if (p === "/") return html(page({ title: "Home of the kicked site", links: ["/a", "/b"] }));
    if (p === "/a" || p === "/b") return html(page({ title: `Page ${p} of the kicked site` }));
    return undefined;
  });
  try {
    await withApp(async (app) => {
      const { done } = await completedLiveAudit(app, site.origin, 30_000);
      assert.equal(done.body.status, "completed", done.text);
      // Each page asked for once: the step chain ran once.
      const pages = site.hits.filter((h) => h === "/" || h === "/a" || h === "/b");
      assert.deepEqual(pages.sort(), ["/", "/a", "/b"]);
    }, { kv: deafQueue(await openTestKv()) });
  } finally {
    await site.close();
  }
});
