/**
 * Image facts: `<img>` count, those without alt text or without width and height (with
 * samples), and `<picture>` elements with no `<img>`. Feeds image_alt_missing and the
 * performance and mobile image checks.
 *
 * @module
 */
import { type Attrs, type FactCollector, type ParseState, sample } from "./collector.ts";

/** What this family adds to the page's facts. */
export interface ImageFacts {
  imgCount: number;
  imgNoAlt: number;
  imgUnsized: number;
  pictureWithoutImg: number;
  samples: { imgNoAlt: string[]; imgUnsized: string[] };
}

class ImageCollector {
  pictureDepth = 0;
  pictureImgs = 0;
  constructor(readonly p: ParseState<ImageFacts>) {}

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

export const imageFacts: FactCollector<ImageFacts> = {
  id: "images",
  tags: ["img", "picture"],
  closeTags: ["picture"],
  init: () => ({
    imgCount: 0,
    imgNoAlt: 0,
    imgUnsized: 0,
    pictureWithoutImg: 0,
    samples: { imgNoAlt: [], imgUnsized: [] },
  }),
  start: (p) => new ImageCollector(p),
};
