/**
 * Document modes by the HTML standard's rules (domain/audit_engine/doctype.ts): the doctypes real sites
 * carry, the edges of the tables (exact identifiers, prefixes, the missing system identifier),
 * malformed doctypes, and where the doctype sits in the page (page_facts.ts).
 */
import assert from "node:assert/strict";
import { doctypeMode, tokenizeDoctype } from "../../domain/audit_engine/doctype.ts";
import { extractPageFacts } from "../../domain/audit_engine/facts/extract.ts";

/** What follows `<!` up to the `>`, as the page parser hands it over. */
const decl = (doctype: string) => doctype.replace(/^<!/, "").replace(/>$/, "");
const mode = (doctype: string) => doctypeMode(decl(doctype)).mode;

Deno.test("doctypes real sites carry: standards, limited-quirks and quirks by the standard's tables", () => {
  const cases: [string, string][] = [
    ["<!DOCTYPE html>", "no-quirks"],
    ["<!doctype HTML>", "no-quirks"],
    ["<!DOCTYPEhtml>", "no-quirks"], // missing whitespace: a parse error, not quirks
    ['<!DOCTYPE html SYSTEM "about:legacy-compat">', "no-quirks"],
    [
      '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">',
      "no-quirks",
    ],
    ['<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN">', "no-quirks"],
    [
      '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">',
      "no-quirks",
    ],
    [
      '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">',
      "no-quirks",
    ],
    // The case: HTML 4.0 Transitional is quirks with or without a system identifier.
    ['<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.0 Transitional//EN">', "quirks"],
    [
      '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.0 Transitional//EN" "http://www.w3.org/TR/REC-html40/loose.dtd">',
      "quirks",
    ],
    ['<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">', "quirks"],
    ['<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">', "quirks"],
    ['<!DOCTYPE HTML PUBLIC "-//Netscape Comm. Corp.//DTD HTML//EN">', "quirks"],
    ['<!doctype html public "-//w3c//dtd html 4.0 frameset//en">', "quirks"], // case-insensitive
    // HTML 4.01 Transitional and Frameset: quirks without a system identifier, limited with one.
    ['<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">', "quirks"],
    ['<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Frameset//EN">', "quirks"],
    [
      '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN" "http://www.w3.org/TR/html4/loose.dtd">',
      "limited-quirks",
    ],
    [
      '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Frameset//EN" "http://www.w3.org/TR/html4/frameset.dtd">',
      "limited-quirks",
    ],
    // An empty system identifier is not a missing one.
    ['<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN" "">', "limited-quirks"],
    [
      '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">',
      "limited-quirks",
    ],
    ['<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Frameset//EN">', "limited-quirks"],
    // Exact public identifiers, and the IBM system identifier.
    ['<!DOCTYPE html PUBLIC "HTML">', "quirks"],
    ['<!DOCTYPE html PUBLIC "-/W3C/DTD HTML 4.0 Transitional/EN">', "quirks"],
    ['<!DOCTYPE html PUBLIC "-//W3O//DTD W3 HTML Strict 3.0//EN//">', "quirks"],
    ['<!DOCTYPE html PUBLIC "HTMLX">', "no-quirks"], // "HTML" is an exact match, not a prefix
    [
      '<!DOCTYPE html SYSTEM "http://www.ibm.com/data/dtd/v11/ibmxhtml1-transitional.dtd">',
      "quirks",
    ],
    // Malformed: force-quirks, or a name other than html.
    ["<!DOCTYPE>", "quirks"],
    ["<!DOCTYPE htm>", "quirks"],
    ["<!DOCTYPE html PUBLIC>", "quirks"],
    ['<!DOCTYPE html PUBLIC -//W3C//DTD HTML 4.01//EN">', "quirks"],
    ["<!DOCTYPE html bogus>", "quirks"],
    ['<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN" junk>', "quirks"],
    // After the system identifier, junk is a parse error without force-quirks.
    ['<!DOCTYPE html SYSTEM "about:legacy-compat" junk>', "no-quirks"],
  ];
  for (const [d, want] of cases) assert.equal(mode(d), want, d);
});

Deno.test("the doctype token: identifiers kept apart from missing, quotes of either kind", () => {
  assert.deepEqual(tokenizeDoctype(decl(`<!DOCTYPE html PUBLIC '-//A//B' "sys">`)), {
    name: "html",
    publicId: "-//A//B",
    systemId: "sys",
    forceQuirks: false,
  });
  assert.deepEqual(tokenizeDoctype(decl("<!DOCTYPE HTML>")), {
    name: "html",
    publicId: null,
    systemId: null,
    forceQuirks: false,
  });
  // A `>` inside a quoted identifier ends the doctype: abrupt, force-quirks.
  const abrupt = '<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN';
  assert.equal(tokenizeDoctype(decl(abrupt)).forceQuirks, true);
});

Deno.test("where the doctype sits: only one before any element or text counts", () => {
  const facts = (html: string) => {
    const f = extractPageFacts(html, new URL("https://s.test/"), "s.test");
    return { has: f.hasDoctype, mode: f.documentMode, reason: f.documentModeReason };
  };
  const body = "<html><head><title>t</title></head><body><p>x</p></body></html>";
  assert.deepEqual(facts(`<!DOCTYPE html>${body}`), { has: true, mode: "no-quirks", reason: null });
  // Comments and whitespace may come first (an XML declaration is a comment to HTML parsers).
  assert.equal(facts(`\n  <!-- generated -->\n<!DOCTYPE html>${body}`).mode, "no-quirks");
  assert.equal(facts(`<?xml version="1.0"?>\n<!DOCTYPE html>${body}`).mode, "no-quirks");
  // After an element or text, the doctype is ignored.
  const late = facts(`<html><!DOCTYPE html><body>x</body></html>`);
  assert.deepEqual(late.has && late.mode, "quirks");
  assert.match(late.reason!, /after an element or text/);
  assert.equal(facts(`Hello <!DOCTYPE html>${body}`).mode, "quirks");
  // No doctype: quirks (doctype_missing's case).
  assert.deepEqual(facts(body).mode, "quirks");
  assert.equal(facts(body).has, false);
  // A second doctype changes nothing.
  const two = '<!DOCTYPE html><!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2//EN">';
  assert.equal(facts(two + body).mode, "no-quirks");
  const f = extractPageFacts(
    '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.0 Transitional//EN">' + body,
    new URL("https://s.test/"),
    "s.test",
  );
  assert.equal(f.doctype, 'DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.0 Transitional//EN"');
  assert.match(f.documentModeReason!, /-\/\/W3C\/\/DTD HTML 4.0 Transitional\/\/EN/);
});

Deno.test("the tokenizer's states: missing whitespace is a parse error that still sets the identifiers", () => {
  // Issue 32: a Javadoc frameset whose identifiers touch ("between DOCTYPE public and system
  // identifiers" is skipped: missing-whitespace-between-doctype-public-and-system-identifiers).
  const javadoc =
    '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.0 Frameset//EN""http://www.w3.org/TR/REC-html40/frameset.dtd">';
  assert.deepEqual(tokenizeDoctype(decl(javadoc)), {
    name: "html",
    publicId: "-//W3C//DTD HTML 4.0 Frameset//EN",
    systemId: "http://www.w3.org/TR/REC-html40/frameset.dtd",
    forceQuirks: false,
  });
  assert.equal(mode(javadoc), "quirks");
  const cases: [string, Partial<ReturnType<typeof tokenizeDoctype>>, string][] = [
    // missing-whitespace-before-doctype-name: "DOCTYPE state" reprocesses in "before DOCTYPE name".
    ["<!DOCTYPEhtml>", { name: "html", forceQuirks: false }, "no-quirks"],
    ["<!DOCTYPE/html>", { name: "/html", forceQuirks: false }, "quirks"],
    // missing-whitespace-after-doctype-public-keyword: "after DOCTYPE public keyword" takes a quote.
    [
      '<!DOCTYPE html PUBLIC"-//W3C//DTD HTML 4.01 Transitional//EN">',
      { publicId: "-//W3C//DTD HTML 4.01 Transitional//EN", systemId: null },
      "quirks",
    ],
    // The same with a touching system identifier: the system identifier is set, so limited-quirks.
    [
      "<!DOCTYPE html PUBLIC\"-//W3C//DTD HTML 4.01 Transitional//EN\"'http://www.w3.org/TR/html4/loose.dtd'>",
      {
        publicId: "-//W3C//DTD HTML 4.01 Transitional//EN",
        systemId: "http://www.w3.org/TR/html4/loose.dtd",
      },
      "limited-quirks",
    ],
    // missing-whitespace-after-doctype-system-keyword.
    [
      '<!DOCTYPE html SYSTEM"http://www.ibm.com/data/dtd/v11/ibmxhtml1-transitional.dtd">',
      { systemId: "http://www.ibm.com/data/dtd/v11/ibmxhtml1-transitional.dtd" },
      "quirks",
    ],
    [
      '<!DOCTYPE html SYSTEM"about:legacy-compat">',
      { systemId: "about:legacy-compat" },
      "no-quirks",
    ],
    // missing-doctype-system-identifier after SYSTEM, missing-quote-before-... : force-quirks.
    ["<!DOCTYPE html SYSTEM>", { forceQuirks: true }, "quirks"],
    ['<!DOCTYPE html SYSTEM about:legacy-compat">', { forceQuirks: true }, "quirks"],
    // "after DOCTYPE public identifier", anything but space, quote or `>`: bogus and force-quirks.
    ['<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN"x"y">', { forceQuirks: true }, "quirks"],
    // abrupt-doctype-system-identifier: a `>` in the quoted system identifier ends the token.
    [
      '<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://x',
      { forceQuirks: true },
      "quirks",
    ],
    // The keywords are case-insensitive, whitespace may be tabs and newlines.
    [
      '<!doctype\thtml\npublic\t"-//W3C//DTD XHTML 1.0 Strict//EN"\n"x">',
      { name: "html", publicId: "-//W3C//DTD XHTML 1.0 Strict//EN", systemId: "x" },
      "no-quirks",
    ],
    // A NULL in the name is U+FFFD, so the name is not "html".
    ["<!DOCTYPE ht\0ml>", { name: "ht\uFFFDml" }, "quirks"],
  ];
  for (const [d, token, want] of cases) {
    const t = tokenizeDoctype(decl(d));
    for (const [k, v] of Object.entries(token)) {
      assert.deepEqual(t[k as keyof typeof t], v, `${d}: ${k}`);
    }
    assert.equal(mode(d), want, d);
  }
});

Deno.test("the issue's Javadoc frameset through the page parser: quirks, identifiers as written", () => {
  const html =
    '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.0 Frameset//EN""http://www.w3.org/TR/REC-html40/frameset.dtd">\n' +
    '<html><head><title>Overview</title></head><frameset cols="20%,80%"><frame src="a.html">' +
    "</frameset></html>";
  const f = extractPageFacts(html, new URL("https://s.test/api/"), "s.test");
  assert.equal(f.hasDoctype, true);
  assert.equal(f.documentMode, "quirks");
  assert.match(f.documentModeReason!, /HTML 4\.0 Frameset/);
  // HTML 4.01 Frameset with a touching system identifier: the identifier is there, limited-quirks.
  const f401 = extractPageFacts(
    html.replace("HTML 4.0 Frameset", "HTML 4.01 Frameset"),
    new URL("https://s.test/api/"),
    "s.test",
  );
  assert.equal(f401.documentMode, "limited-quirks");
});
