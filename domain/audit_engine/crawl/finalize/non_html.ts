/**
 * Non-HTML files on the records pass: fetched 200 files that are not HTML, and those carrying an
 * X-Robots-Tag (x_robots_tag_non_html).
 *
 * @module
 */
import { is2xx } from "./record.ts";
import type { RecordReducer } from "./reducer.ts";

export const nonHtmlFiles: RecordReducer = {
  id: "non_html",
  start: (pass) => ({
    add(r) {
      if (r.state !== "fetched" || r.html || !is2xx(r)) return;
      const f = pass.f;
      f.nonHtml2xx++;
      if (r.nonHtmlRobots) {
        f.xRobotsNonHtml.add({
          url: r.url,
          x_robots_tag: r.nonHtmlRobots.tag,
          content_type: r.nonHtmlRobots.type,
        });
      }
    },
  }),
};
