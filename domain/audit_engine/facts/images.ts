/**
 * Image facts: `<img>` count, those without alt text or without width and height (with
 * samples), and `<picture>` elements with no `<img>`. Feeds image_alt_missing and the
 * performance and mobile image checks.
 *
 * @module
 */
import { sample } from "../page_facts.ts";
import type { Attrs, FactCollector, ParseState } from "./collector.ts";

class ImageCollector {
  pictureDepth = 0;
  pictureImgs = 0;
  constructor(readonly p: ParseState) {}

  open(name: string, a: Attrs) {
    if (name === "picture") {
      if (this.pictureDepth++ === 0) this.pictureImgs = 0;
      return;
    }
    const f = this.p.f;
    f.imgCount++;
    if (a.alt === undefined && a.role !== "presentation" && a.role !== "none") {
      f.imgNoAlt++;
      sample(f.samples.imgNoAlt, a.src ?? "(no src)");
    }
    if (a.width === undefined || a.height === undefined) {
      f.imgUnsized++;
      sample(f.samples.imgUnsized, a.src ?? "(no src)");
    }
    if (this.pictureDepth > 0) this.pictureImgs++;
  }

  close(_name: string) {
    if (--this.pictureDepth === 0 && this.pictureImgs === 0) this.p.f.pictureWithoutImg++;
  }
}

export const imageFacts: FactCollector = {
  id: "images",
  tags: ["img", "picture"],
  closeTags: ["picture"],
  start: (p) => new ImageCollector(p),
};
