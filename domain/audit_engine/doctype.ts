/**
 * The document mode a doctype puts a browser in, by the HTML standard's rules: the DOCTYPE token
 * as the tokenizer builds it (name, public and system identifiers, force-quirks flag; "DOCTYPE
 * state" to "bogus DOCTYPE state", html.spec.whatwg.org/multipage/parsing.html#doctype-state),
 * where a missing space (before the name, after PUBLIC or SYSTEM, between the two identifiers) is
 * a parse error that still sets the identifiers; then the tables of "the initial insertion mode"
 * (html.spec.whatwg.org/multipage/parsing.html#the-initial-insertion-mode), copied as published:
 * the public identifiers that are quirks whole or as a prefix, the IBM system identifier, the
 * HTML 4.01 Frameset and Transitional prefixes that are quirks without a system identifier and
 * limited-quirks with one, and the XHTML 1.0 Frameset and Transitional prefixes that are
 * limited-quirks. Comparisons are ASCII case-insensitive, as the standard says.
 *
 * Where the doctype sits matters too: only a doctype before any element or text counts (comments
 * and whitespace may come first); a later one is ignored and the document is in quirks mode. That
 * part is the page parser's (page_facts.ts), which calls `doctypeMode` for the first doctype only.
 *
 * @example
 * ```ts
 * doctypeMode('DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.0 Transitional//EN"').mode; // "quirks"
 * doctypeMode("DOCTYPE html").mode; // "no-quirks"
 * ```
 *
 * @module
 */

export type DocumentMode = "no-quirks" | "limited-quirks" | "quirks";

/** The mode and, unless it is no-quirks, the rule of the standard that decided it. */
export interface DoctypeVerdict {
  mode: DocumentMode;
  reason: string | null;
}

/** Public identifiers that are quirks when equal to the whole identifier. */
const QUIRKS_PUBLIC_IDS = [
  "-//W3O//DTD W3 HTML Strict 3.0//EN//",
  "-/W3C/DTD HTML 4.0 Transitional/EN",
  "HTML",
].map((s) => s.toLowerCase());

const QUIRKS_SYSTEM_ID = "http://www.ibm.com/data/dtd/v11/ibmxhtml1-transitional.dtd";

/** Public identifiers that are quirks when the identifier starts with one of them. */
const QUIRKS_PUBLIC_PREFIXES = [
  "+//Silmaril//dtd html Pro v0r11 19970101//",
  "-//AS//DTD HTML 3.0 asWedit + extensions//",
  "-//AdvaSoft Ltd//DTD HTML 3.0 asWedit + extensions//",
  "-//IETF//DTD HTML 2.0 Level 1//",
  "-//IETF//DTD HTML 2.0 Level 2//",
  "-//IETF//DTD HTML 2.0 Strict Level 1//",
  "-//IETF//DTD HTML 2.0 Strict Level 2//",
  "-//IETF//DTD HTML 2.0 Strict//",
  "-//IETF//DTD HTML 2.0//",
  "-//IETF//DTD HTML 2.1E//",
  "-//IETF//DTD HTML 3.0//",
  "-//IETF//DTD HTML 3.2 Final//",
  "-//IETF//DTD HTML 3.2//",
  "-//IETF//DTD HTML 3//",
  "-//IETF//DTD HTML Level 0//",
  "-//IETF//DTD HTML Level 1//",
  "-//IETF//DTD HTML Level 2//",
  "-//IETF//DTD HTML Level 3//",
  "-//IETF//DTD HTML Strict Level 0//",
  "-//IETF//DTD HTML Strict Level 1//",
  "-//IETF//DTD HTML Strict Level 2//",
  "-//IETF//DTD HTML Strict Level 3//",
  "-//IETF//DTD HTML Strict//",
  "-//IETF//DTD HTML//",
  "-//Metrius//DTD Metrius Presentational//",
  "-//Microsoft//DTD Internet Explorer 2.0 HTML Strict//",
  "-//Microsoft//DTD Internet Explorer 2.0 HTML//",
  "-//Microsoft//DTD Internet Explorer 2.0 Tables//",
  "-//Microsoft//DTD Internet Explorer 3.0 HTML Strict//",
  "-//Microsoft//DTD Internet Explorer 3.0 HTML//",
  "-//Microsoft//DTD Internet Explorer 3.0 Tables//",
  "-//Netscape Comm. Corp.//DTD HTML//",
  "-//Netscape Comm. Corp.//DTD Strict HTML//",
  "-//O'Reilly and Associates//DTD HTML 2.0//",
  "-//O'Reilly and Associates//DTD HTML Extended 1.0//",
  "-//O'Reilly and Associates//DTD HTML Extended Relaxed 1.0//",
  "-//SQ//DTD HTML 2.0 HoTMetaL + extensions//",
  "-//SoftQuad Software//DTD HoTMetaL PRO 6.0::19990601::extensions to HTML 4.0//",
  "-//SoftQuad//DTD HoTMetaL PRO 4.0::19971010::extensions to HTML 4.0//",
  "-//Spyglass//DTD HTML 2.0 Extended//",
  "-//Sun Microsystems Corp.//DTD HotJava HTML//",
  "-//Sun Microsystems Corp.//DTD HotJava Strict HTML//",
  "-//W3C//DTD HTML 3 1995-03-24//",
  "-//W3C//DTD HTML 3.2 Draft//",
  "-//W3C//DTD HTML 3.2 Final//",
  "-//W3C//DTD HTML 3.2//",
  "-//W3C//DTD HTML 3.2S Draft//",
  "-//W3C//DTD HTML 4.0 Frameset//",
  "-//W3C//DTD HTML 4.0 Transitional//",
  "-//W3C//DTD HTML Experimental 19960712//",
  "-//W3C//DTD HTML Experimental 970421//",
  "-//W3C//DTD W3 HTML//",
  "-//W3O//DTD W3 HTML 3.0//",
  "-//WebTechs//DTD Mozilla HTML 2.0//",
  "-//WebTechs//DTD Mozilla HTML//",
].map((s) => s.toLowerCase());

/** Quirks without a system identifier, limited-quirks with one. */
const HTML401_PREFIXES = [
  "-//W3C//DTD HTML 4.01 Frameset//",
  "-//W3C//DTD HTML 4.01 Transitional//",
].map((s) => s.toLowerCase());

/** Limited-quirks whatever the system identifier. */
const XHTML10_PREFIXES = [
  "-//W3C//DTD XHTML 1.0 Frameset//",
  "-//W3C//DTD XHTML 1.0 Transitional//",
].map((s) => s.toLowerCase());

/** The DOCTYPE token: a missing identifier is null (an empty one is ""). */
export interface DoctypeToken {
  name: string | null;
  publicId: string | null;
  systemId: string | null;
  forceQuirks: boolean;
}

const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\f" || c === "\r";

/** ASCII lower case only, as the tokenizer lowers a doctype name. */
const asciiLower = (s: string) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

/**
 * Tokenizes what follows `<!` of a doctype up to (not including) its `>`: "DOCTYPE" and the rest.
 * The page parser ends a doctype at its first `>`, as the tokenizer does (a `>` inside a quoted
 * identifier ends it too, with the force-quirks flag set: "abrupt-doctype-public-identifier").
 */
export function tokenizeDoctype(declaration: string): DoctypeToken {
  const t: DoctypeToken = { name: null, publicId: null, systemId: null, forceQuirks: false };
  // "DOCTYPE" matched case-insensitively by the caller; NULLs are U+FFFD in the token.
  const s = declaration.replace(/^doctype/i, "").replace(/\0/g, "\uFFFD");
  let i = 0;
  const n = s.length;
  const skipSpace = () => {
    while (i < n && isSpace(s[i])) i++;
  };
  // DOCTYPE state and before DOCTYPE name state.
  skipSpace();
  if (i >= n) {
    t.forceQuirks = true; // missing-doctype-name
    return t;
  }
  // DOCTYPE name state.
  let name = "";
  while (i < n && !isSpace(s[i])) name += s[i++];
  t.name = asciiLower(name);
  // After DOCTYPE name state.
  skipSpace();
  if (i >= n) return t;
  const keyword = s.slice(i, i + 6).toUpperCase();
  let kind: "public" | "system";
  if (keyword === "PUBLIC") kind = "public";
  else if (keyword === "SYSTEM") kind = "system";
  else {
    t.forceQuirks = true; // invalid-character-sequence-after-doctype-name; bogus DOCTYPE
    return t;
  }
  i += 6;
  // After DOCTYPE public/system keyword state, then before the identifier.
  skipSpace();
  const quoted = (): string | null => {
    const q = s[i];
    if (q !== '"' && q !== "'") return null;
    const end = s.indexOf(q, i + 1);
    if (end < 0) {
      // A `>` (the end of the declaration) inside the identifier: abrupt, force-quirks.
      t.forceQuirks = true;
      const v = s.slice(i + 1);
      i = n;
      return v;
    }
    const v = s.slice(i + 1, end);
    i = end + 1;
    return v;
  };
  if (i >= n) {
    t.forceQuirks = true; // missing-doctype-public/system-identifier
    return t;
  }
  const first = quoted();
  if (first === null) {
    t.forceQuirks = true; // missing-quote-before-doctype-identifier; bogus DOCTYPE
    return t;
  }
  if (kind === "system") {
    t.systemId = first;
  } else {
    t.publicId = first;
    if (t.forceQuirks) return t;
    // After DOCTYPE public identifier, between public and system identifiers.
    skipSpace();
    if (i >= n) return t;
    const sys = quoted();
    if (sys === null) {
      t.forceQuirks = true; // missing-quote-before-doctype-system-identifier; bogus DOCTYPE
      return t;
    }
    t.systemId = sys;
  }
  // After DOCTYPE system identifier state: anything else is a parse error that does NOT set the
  // force-quirks flag (bogus DOCTYPE state ignores the rest).
  return t;
}

const startsWithAny = (id: string, prefixes: readonly string[]) =>
  prefixes.find((p) => id.startsWith(p)) ?? null;

/** The mode of a DOCTYPE token, by the initial insertion mode's rules (not an iframe srcdoc). */
export function modeOf(t: DoctypeToken): DoctypeVerdict {
  const quirks = (reason: string): DoctypeVerdict => ({ mode: "quirks", reason });
  if (t.forceQuirks) return quirks("the doctype is malformed (the parser sets force-quirks)");
  if (t.name !== "html") {
    return quirks(`the doctype names "${t.name ?? ""}", not "html"`);
  }
  const pub = t.publicId === null ? null : asciiLower(t.publicId);
  const sys = t.systemId === null ? null : asciiLower(t.systemId);
  if (pub !== null && QUIRKS_PUBLIC_IDS.includes(pub)) {
    return quirks(`public identifier "${t.publicId}"`);
  }
  if (sys === QUIRKS_SYSTEM_ID) return quirks(`system identifier "${t.systemId}"`);
  if (pub !== null) {
    const p = startsWithAny(pub, QUIRKS_PUBLIC_PREFIXES);
    if (p !== null) return quirks(`public identifier "${t.publicId}"`);
    const h = startsWithAny(pub, HTML401_PREFIXES);
    if (h !== null && sys === null) {
      return quirks(`public identifier "${t.publicId}" without a system identifier`);
    }
    const x = startsWithAny(pub, XHTML10_PREFIXES);
    if (x !== null || h !== null) {
      return { mode: "limited-quirks", reason: `public identifier "${t.publicId}"` };
    }
  }
  return { mode: "no-quirks", reason: null };
}

/** The mode the doctype declaration (what follows `<!`, without the `>`) puts a browser in. */
export function doctypeMode(declaration: string): DoctypeVerdict {
  return modeOf(tokenizeDoctype(declaration));
}
