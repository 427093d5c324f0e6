/**
 * Plugin facts: `<object>`, `<embed>` and `<applet>` elements (with samples). Feeds the legacy_plugins
 * check.
 *
 * @module
 */
import { sample } from "../page_facts.ts";
import type { Attrs, FactCollector, ParseState } from "./collector.ts";

export const pluginFacts: FactCollector = {
  id: "plugins",
  tags: ["object", "embed", "applet"],
  start: (p: ParseState) => ({
    open(name: string, a: Attrs) {
      p.f.plugins++;
      sample(p.f.samples.plugins, `${name} ${a.data ?? a.src ?? a.code ?? ""}`.trim());
    },
  }),
};
