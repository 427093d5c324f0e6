/**
 * App root facts: a `<div>` with a single-page-app mount id (`root`, `__next`, …). Feeds
 * likely_client_rendered.
 *
 * @module
 */
import type { Attrs, FactCollector, ParseState } from "./collector.ts";

const APP_ROOT_IDS = new Set(["root", "app", "__next", "__nuxt", "svelte", "___gatsby"]);

/** What this family adds to the page's facts. */
export interface AppRootFacts {
  appRoot: boolean;
}

export const appRootFacts: FactCollector<AppRootFacts> = {
  id: "app_root",
  tags: ["div"],
  init: () => ({ appRoot: false }),
  start: (p: ParseState<AppRootFacts>) => ({
    open(_name: string, a: Attrs) {
      if (a.id !== undefined && APP_ROOT_IDS.has(a.id)) p.f.appRoot = true;
    },
  }),
};
