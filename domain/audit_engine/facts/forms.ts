/**
 * Form facts: `<form>` count and the actions that submit over http. Feeds the security checks.
 *
 * @module
 */
import { MAX_ITEMS } from "../page_facts.ts";
import { type Attrs, type FactCollector, type ParseState, tryUrl } from "./collector.ts";

export const formFacts: FactCollector = {
  id: "forms",
  tags: ["form"],
  start: (p: ParseState) => ({
    open(_name: string, a: Attrs) {
      const f = p.f;
      f.forms++;
      // No action (or an empty one) submits to the page itself.
      const action = (a.action ?? "").trim();
      const target = action === "" ? p.base : tryUrl(action, p.base);
      if (target !== null && target.protocol === "http:") {
        f.insecureFormActions++;
        if (f.insecureForms.length < MAX_ITEMS) f.insecureForms.push(target.href);
      }
    },
  }),
};
