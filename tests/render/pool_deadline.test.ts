/**
 * The browser pool's page deadline counts from a browser being up: a slow launch (a cold start on
 * a busy machine) is not a page's timeout, and the deadline still holds for the page itself. The
 * browser here is a stand-in with the three calls the pool makes, so the launch can be slowed at
 * will; the real Chromium's deadlines are in render.test.ts.
 */
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { BrowserPool, RenderFailedError } from "../../domain/render/pool.ts";

function standInBrowser(): Browser {
  const context = {
    newPage: () => Promise.resolve({}),
    close: () => Promise.resolve(),
  };
  return {
    newContext: () => Promise.resolve(context),
    on: () => {},
    close: () => Promise.resolve(),
  } as unknown as Browser;
}

Deno.test("pool: a page's deadline counts from the browser being up, not from its launch", async () => {
  let launches = 0;
  const pool = new BrowserPool({
    launch: async () => {
      launches++;
      await new Promise((r) => setTimeout(r, 300)); // three times the page's deadline
      return standInBrowser();
    },
  });
  try {
    const out = await pool.run(() => Promise.resolve("rendered"), { timeoutMs: 100 });
    assert.equal(out, "rendered");
    assert.equal(pool.stats.timeouts, 0);
    // A page that never finishes still times out, on the browser already up.
    await assert.rejects(
      pool.run(() => new Promise<never>(() => {}), { timeoutMs: 100 }),
      (e) => e instanceof RenderFailedError && e.kind === "timeout",
    );
    assert.equal(pool.stats.timeouts, 1);
    assert.equal(launches, 1);
  } finally {
    await pool.close();
  }
});
