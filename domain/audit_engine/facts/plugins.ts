/**
 * Plugin facts: `<object>`, `<embed>` and `<applet>` elements (with samples). Feeds the legacy_plugins
 * check.
 *
 * @module
 */
import { type Attrs, type FactCollector, type ParseState, sample } from "./collector.ts";

/** What this family adds to the page's facts. */
export interface PluginFacts {
  plugins: number;
  samples: { plugins: string[] };
}

export const pluginFacts: FactCollector<PluginFacts> = {
  id: "plugins",
  tags: ["object", "embed", "applet"],
  init: () => ({ plugins: 0, samples: { plugins: [] } }),
  start: (p: ParseState<PluginFacts>) => ({
    open(name: string, a: Attrs) {
      p.f.plugins++;
      sample(p.f.samples.plugins, `${name} ${a.data ?? a.src ?? a.code ?? ""}`.trim());
    },
  }),
};
