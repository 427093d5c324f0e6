/**
 * Front-end libraries with known vulnerabilities: recognises jQuery, jQuery UI, AngularJS,
 * Bootstrap, Lodash and Moment.js, and looks the version up in a small bundled advisory table.
 * A version is reported only when the file's content confirms it, whatever the file's name
 * (`scriptLibrary`): the banner at the top of the file, the version string the URL names quoted
 * in the file's head next to the library's name (`libraryFromContent`), or a version string the
 * library's own code carries (jQuery's `jquery: "1.8.3"`). The URL (file name, CDN path, `?ver=`)
 * only says which other hosts' files are worth reading. A file named jquery-1.8.3.min.js that
 * holds jQuery 3.7.1 is 3.7.1, and /js/lib.js holding 1.8.3 is 1.8.3.
 *
 * The table is deliberately small and dated: it names its source and the day it was compiled,
 * and each entry lists the advisories (CVE ids, each resolvable at nvd.nist.gov/vuln/detail/<id>)
 * that make a version vulnerable. It is not a vulnerability database; a library it does not list
 * is not reported either way.
 *
 * @module
 */

/** Where the table comes from and when it was compiled. Shown in docs/audit.md. */
export const ADVISORY_TABLE = {
  source: "GitHub Advisory Database (github.com/advisories) and NVD (nvd.nist.gov), per CVE id; " +
    "AngularJS end of life: blog.angular.dev, “Discontinued Long Term Support for AngularJS” " +
    "(support ended 2022-01-01); Bootstrap advisories: twbs/bootstrap issue #28330",
  compiled: "2026-11-23",
} as const;

export type LibraryName = "jquery" | "jquery-ui" | "angularjs" | "bootstrap" | "lodash" | "moment";

export interface Advisory {
  library: LibraryName;
  /** Versions in [from, below) are affected. */
  from: string;
  below: string;
  /** CVE ids, or "EOL" for an end-of-life line with no more fixes. */
  ids: string[];
  summary: string;
}

/** THE advisory table (compiled ADVISORY_TABLE.compiled from ADVISORY_TABLE.source). */
export const ADVISORIES: readonly Advisory[] = [
  {
    library: "jquery",
    from: "0",
    below: "1.9.0",
    ids: ["CVE-2012-6708"],
    summary: "jQuery() treats strings with text before '<' as HTML (XSS)",
  },
  {
    library: "jquery",
    from: "0",
    below: "3.0.0",
    ids: ["CVE-2015-9251"],
    summary: "cross-domain ajax responses with text/javascript are executed",
  },
  {
    library: "jquery",
    from: "0",
    below: "3.4.0",
    ids: ["CVE-2019-11358"],
    summary: "prototype pollution through jQuery.extend(true, ...)",
  },
  {
    library: "jquery",
    from: "1.0.3",
    below: "3.5.0",
    ids: ["CVE-2020-11022", "CVE-2020-11023"],
    summary: "HTML passed to .html(), .append() and others may run scripts, even sanitised",
  },
  {
    library: "jquery-ui",
    from: "0",
    below: "1.13.0",
    ids: ["CVE-2021-41182", "CVE-2021-41183", "CVE-2021-41184"],
    summary: "XSS through the altField, text options of the datepicker and position's of option",
  },
  {
    library: "jquery-ui",
    from: "0",
    below: "1.13.2",
    ids: ["CVE-2022-31160"],
    summary: "XSS when refreshing a checkboxradio widget whose label holds encoded HTML",
  },
  {
    library: "angularjs",
    from: "1.0.0",
    below: "2.0.0",
    ids: ["EOL", "CVE-2022-25844", "CVE-2023-26116", "CVE-2023-26117", "CVE-2023-26118"],
    summary: "AngularJS 1.x reached end of life (no fixes since 2022); open ReDoS advisories",
  },
  {
    library: "bootstrap",
    from: "0",
    below: "3.4.0",
    ids: ["CVE-2018-14040", "CVE-2018-14042", "CVE-2018-20676", "CVE-2018-20677"],
    summary: "XSS through data-parent, data-container, data-viewport and affix target",
  },
  {
    library: "bootstrap",
    from: "0",
    below: "3.4.1",
    ids: ["CVE-2019-8331"],
    summary: "XSS through the tooltip or popover data-template attribute",
  },
  {
    library: "bootstrap",
    from: "4.0.0",
    below: "4.1.2",
    ids: ["CVE-2018-14040", "CVE-2018-14041", "CVE-2018-14042"],
    summary: "XSS through collapse data-parent, scrollspy data-target, tooltip data-container",
  },
  {
    library: "bootstrap",
    from: "4.0.0",
    below: "4.3.1",
    ids: ["CVE-2019-8331"],
    summary: "XSS through the tooltip or popover data-template attribute",
  },
  {
    library: "lodash",
    from: "0",
    below: "4.17.12",
    ids: ["CVE-2019-10744"],
    summary: "prototype pollution through defaultsDeep",
  },
  {
    library: "lodash",
    from: "0",
    below: "4.17.21",
    ids: ["CVE-2021-23337", "CVE-2020-28500"],
    summary: "command injection through template; ReDoS in toNumber, trim and trimEnd",
  },
  {
    library: "moment",
    from: "0",
    below: "2.29.2",
    ids: ["CVE-2022-24785"],
    summary: "path traversal in locale loading",
  },
  {
    library: "moment",
    from: "0",
    below: "2.29.4",
    ids: ["CVE-2022-31129"],
    summary: "quadratic-time (ReDoS) RFC 2822 date parsing",
  },
];

const V = String.raw`(\d+\.\d+(?:\.\d+)?)`;

interface Matcher {
  library: LibraryName;
  /** File names like jquery-1.8.3.min.js. */
  file: RegExp;
  /** CDN paths like /jquery/3.4.1/ or /jquery@3.4.1/ (followed by the library's file). */
  dir: RegExp;
  /** The library's plain file name (versionless): jquery.min.js, jquery.js, ... */
  plain: RegExp;
  /** Banner at the top of the file. */
  banner: RegExp;
}

const MATCHERS: readonly Matcher[] = [
  {
    library: "jquery-ui",
    file: new RegExp(String.raw`/jquery[-.]ui[-.]v?${V}(?:\.custom)?(?:\.min)?\.js$`),
    dir: new RegExp(String.raw`/(?:jqueryui|jquery-ui|jquery\.ui)[/@]${V}/`),
    plain: /\/jquery[-.]ui(?:\.custom)?(?:\.min)?\.js$/,
    banner: new RegExp(String.raw`jQuery UI - v${V}`),
  },
  {
    library: "jquery",
    file: new RegExp(String.raw`/jquery[-.]v?${V}(?:\.slim)?(?:\.min)?\.js$`),
    dir: new RegExp(String.raw`/jquery[/@]${V}/`),
    plain: /\/jquery(?:\.slim)?(?:\.min)?\.js$/,
    banner: new RegExp(String.raw`jQuery (?:JavaScript Library )?v${V}`),
  },
  {
    library: "angularjs",
    file: new RegExp(String.raw`/angular[-.]v?${V}(?:\.min)?\.js$`),
    dir: new RegExp(String.raw`/(?:angularjs|angular\.js|angular)[/@]${V}/`),
    plain: /\/angular(?:\.min)?\.js$/,
    banner: new RegExp(String.raw`AngularJS v${V}`),
  },
  {
    library: "bootstrap",
    file: new RegExp(String.raw`/bootstrap[-.]v?${V}(?:\.bundle)?(?:\.min)?\.js$`),
    dir: new RegExp(String.raw`/(?:bootstrap|twitter-bootstrap)[/@]${V}/`),
    plain: /\/bootstrap(?:\.bundle)?(?:\.min)?\.js$/,
    banner: new RegExp(String.raw`Bootstrap v${V}`),
  },
  {
    library: "lodash",
    file: new RegExp(String.raw`/lodash[-.]v?${V}(?:\.core)?(?:\.min)?\.js$`),
    dir: new RegExp(String.raw`/(?:lodash\.js|lodash)[/@]${V}/`),
    plain: /\/lodash(?:\.core)?(?:\.min)?\.js$/,
    // "lodash 3.10.1 (Custom Build)", or the full build's VERSION near its "Lodash" licence.
    banner: new RegExp(String.raw`[Ll]odash v?${V}|Lodash[\s\S]{0,2000}?VERSION = '${V}'`),
  },
  {
    library: "moment",
    file: new RegExp(String.raw`/moment[-.]v?${V}(?:\.min)?\.js$`),
    dir: new RegExp(String.raw`/(?:moment\.js|moment)[/@]${V}/`),
    plain: /\/moment(?:-with-locales)?(?:\.min)?\.js$/,
    banner: new RegExp(String.raw`moment(?:\.js)?\s*\n?\s*//! version : ${V}`),
  },
];

const NAMES = /jquery|angular|bootstrap|lodash|moment/i;

/** Cheap first test on a raw `src` (the parser calls it for every external script). */
export function mayNameLibrary(src: string): boolean {
  return NAMES.test(src);
}

export interface Detected {
  library: LibraryName;
  version: string;
  /**
   * Where the version was read: the URL (a hint only, never reported on its own), the file's
   * banner, or the URL's version quoted in the file's head (`version_string`).
   */
  from: "url" | "banner" | "version_string";
}

function pathOf(url: string): { path: string; query: string } {
  try {
    const u = new URL(url);
    return { path: u.pathname.toLowerCase(), query: u.search };
  } catch {
    return { path: "", query: "" };
  }
}

/** The library and version a script URL names, if any. */
export function libraryFromUrl(url: string): Detected | null {
  const { path, query } = pathOf(url);
  if (path === "") return null;
  for (const m of MATCHERS) {
    const f = m.file.exec(path);
    if (f) return { library: m.library, version: f[1], from: "url" };
    const d = m.dir.exec(path);
    if (d) {
      const file = path.slice(path.lastIndexOf("/"));
      if (m.plain.test(file) || m.file.test(file)) {
        return { library: m.library, version: d[1], from: "url" };
      }
    }
    if (m.plain.test(path)) {
      // WordPress and others put the version in ?ver= / ?v=.
      const q = /[?&](?:ver|v|version)=v?(\d+\.\d+(?:\.\d+)?)(?:&|$)/.exec(query);
      if (q) return { library: m.library, version: q[1], from: "url" };
    }
  }
  return null;
}

/** The script URL names a known library without a version: its banner is worth reading. */
export function needsBanner(url: string): boolean {
  if (libraryFromUrl(url) !== null) return false;
  const { path } = pathOf(url);
  return MATCHERS.some((m) => m.plain.test(path));
}

/**
 * The script URL names a known library, with or without a version: its head is worth reading,
 * since only the content confirms a version.
 */
export function namesLibrary(url: string): boolean {
  return libraryFromUrl(url) !== null || needsBanner(url);
}

/** How a library's name is written in its own files (a version string must sit near it). */
const CONTENT_NAMES: Record<LibraryName, RegExp> = {
  "jquery": /jquery/i,
  "jquery-ui": /jquery[ .-]?ui/i,
  "angularjs": /angular/i,
  "bootstrap": /bootstrap/i,
  "lodash": /lodash/i,
  "moment": /moment/i,
};

/**
 * The library and version the head of a script file confirms: its banner, or else the version
 * its URL names (`fromUrl`) written as a quoted string in the head, which also names the library
 * (minified builds without a banner keep `"3.4.1"` near the top). Null when the content confirms
 * nothing: the URL alone is never evidence.
 */
export function libraryFromContent(head: string, fromUrl: Detected | null): Detected | null {
  const banner = libraryFromBanner(head);
  if (banner !== null) return banner;
  if (fromUrl === null || !CONTENT_NAMES[fromUrl.library].test(head)) return null;
  const v = fromUrl.version.replaceAll(".", "\\.");
  if (!new RegExp(`["']v?${v}["']`).test(head)) return null;
  return { library: fromUrl.library, version: fromUrl.version, from: "version_string" };
}

/**
 * Version strings a library's code carries in its body whatever its banner (a build that
 * stripped the banner, a bundle that holds the library, a file of any name): jQuery's
 * `jquery: "1.8.3"` (its prototype's version property) and `jQuery.fn.jquery = "…"`.
 */
const CONTENT_VERSIONS: readonly { library: LibraryName; re: RegExp }[] = [
  { library: "jquery", re: new RegExp(String.raw`\bjquery\s*[:=]\s*["']${V}["']`) },
];

/**
 * The library and version a script file's content says, whatever its name (`url` only adds the
 * hint of libraryFromContent): its banner, the URL's version quoted in it, or a version string
 * the library's own code carries (CONTENT_VERSIONS). The crawl reads the first bytes of every
 * same-site script and of library-named ones elsewhere (crawl/banners.ts).
 */
export function scriptLibrary(url: string, head: string): Detected | null {
  const lib = libraryFromContent(head, libraryFromUrl(url));
  if (lib !== null) return lib;
  for (const c of CONTENT_VERSIONS) {
    const m = c.re.exec(head);
    if (m) return { library: c.library, version: m[1], from: "version_string" };
  }
  return null;
}

/** The library and version in the first bytes of a script file, if any. */
export function libraryFromBanner(head: string): Detected | null {
  for (const m of MATCHERS) {
    const b = m.banner.exec(head);
    if (b) return { library: m.library, version: (b[1] ?? b[2])!, from: "banner" };
  }
  return null;
}

/** Compares dotted versions numerically ("1.12.4" > "1.9"). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** The advisories that apply to one library version (empty when none). */
export function advisoriesFor(library: LibraryName, version: string): Advisory[] {
  return ADVISORIES.filter((a) =>
    a.library === library && compareVersions(version, a.from) >= 0 &&
    compareVersions(version, a.below) < 0
  );
}
