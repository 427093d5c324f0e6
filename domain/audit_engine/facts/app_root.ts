/**
 * App root facts: a `<div>` with a single-page-app mount id (`root`, `__next`, …). Feeds
 * likely_client_rendered.
 *
 * @module
 */
import type { Attrs, FactCollector, ParseState } from "./collector.ts";

const APP_ROOT_IDS = new Set(["root", "app", "__next", "__nuxt", "svelte", "___gatsby"]);

export const appRootFacts: FactCollector = {
  id: "app_root",
  tags: ["div"],
  start: (p: ParseState) => ({
    open(_name: string, a: Attrs) {
      if (a.id !== undefined && APP_ROOT_IDS.has(a.id)) p.f.appRoot = true;
    },
  }),
};
