/**
 * Form facts: `<form>` count and the actions that submit over http. Feeds the security checks.
 *
 * @module
 */
import { type Attrs, type FactCollector, MAX_ITEMS, type ParseState, tryUrl } from "./collector.ts";

/** What this family adds to the page's facts. */
export interface FormFacts {
  forms: number;
  /** Form actions that submit over http (explicit http://, or relative on an http page). */
  insecureFormActions: number;
  /** Those actions, resolved, at most MAX_ITEMS. */
  insecureForms: string[];
}

export const formFacts: FactCollector<FormFacts> = {
  id: "forms",
  tags: ["form"],
  init: () => ({ forms: 0, insecureFormActions: 0, insecureForms: [] }),
  start: (p: ParseState<FormFacts>) => ({
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
