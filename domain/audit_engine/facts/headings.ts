/**
 * Heading facts: the h1 count and text, and whether a level is skipped. Feeds the structure
 * checks (h1_missing, heading_order).
 *
 * @module
 */
import { type Attrs, collapse, type FactCollector, type ParseState } from "./collector.ts";

/** What this family adds to the page's facts. */
export interface HeadingFacts {
  h1Count: number;
  h1: string | null;
  headingSkip: boolean;
}

class HeadingCollector {
  lastHeading = 0;
  inH1 = false;
  h1Buf = "";
  constructor(readonly p: ParseState<HeadingFacts>) {}

  open(name: string, _a: Attrs) {
    const f = this.p.f;
    const level = name.charCodeAt(1) - 48;
    if (level > this.lastHeading + 1 && this.lastHeading !== 0) f.headingSkip = true;
    this.lastHeading = level;
    if (level === 1) {
      f.h1Count++;
      if (f.h1 === null) {
        this.inH1 = true;
        this.h1Buf = "";
        this.p.captureText(this);
      }
    }
  }

  text(text: string) {
    this.h1Buf += text;
  }

  close(_name: string) {
    if (!this.inH1) return;
    this.inH1 = false;
    this.p.releaseText(this);
    const t = collapse(this.h1Buf);
    if (t !== "") this.p.f.h1 = t;
  }
}

export const headingFacts: FactCollector<HeadingFacts> = {
  id: "headings",
  tags: ["h1", "h2", "h3", "h4", "h5", "h6"],
  closeTags: ["h1"],
  init: () => ({ h1Count: 0, h1: null, headingSkip: false }),
  start: (p) => new HeadingCollector(p),
};
