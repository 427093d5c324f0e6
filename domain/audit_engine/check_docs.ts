/**
 * What each check means for a site and how to fix it: short, plain texts served by
 * `GET /v1/audits/{id}/issues` and on `/docs/checks#<check id>`. Kept apart from the check logic
 * so wording changes never touch a check, and keyed by the stable check id.
 *
 * @module
 */
import { ALL_CHECKS } from "./checks/index.ts";
import type { Check } from "./types.ts";

export interface CheckDoc {
  /** What the finding means for the site and its visitors. */
  meaning: string;
  /** What to change so the check passes. */
  fix: string;
}

export const CHECK_DOCS: Record<string, CheckDoc> = {
  robots_txt_unreachable: {
    meaning:
      "Search engines treat a robots.txt that answers 5xx or times out as 'crawl nothing' for a while; Google may stop crawling the whole site.",
    fix: "Make /robots.txt answer 200 (or 404 if you have no rules) quickly and reliably.",
  },
  robots_txt_invalid: {
    meaning:
      "Crawlers silently skip lines they do not understand, so rules you wrote may not apply.",
    fix:
      "Fix each listed line: start with a User-agent group, begin patterns with / or *, put $ last, use absolute Sitemap URLs, stay under 500 KiB.",
  },
  robots_txt_missing: {
    meaning: "Without robots.txt crawlers assume everything may be crawled; this is allowed.",
    fix:
      "Optional: add a /robots.txt with your rules and a Sitemap: line so crawlers find the sitemap.",
  },
  start_url_blocked: {
    meaning: "robots.txt forbids search engines to crawl the home page; the site cannot rank.",
    fix: "Remove or narrow the Disallow rule that matches the home page for Googlebot and *.",
  },
  crawler_blocked: {
    meaning: "robots.txt disallows SerpwrightBot, so this audit crawled nothing.",
    fix: "Allow the SerpwrightBot user agent in robots.txt if you want the site audited.",
  },
  blocked_by_robots: {
    meaning: "These internal URLs are linked or listed but robots.txt forbids crawling them.",
    fix:
      "If they should rank, remove the matching Disallow rule; if not, stop linking to them or keep them out of the sitemap.",
  },
  home_page_error: {
    meaning: "The home page answers an error, fails or loops: visitors and crawlers see nothing.",
    fix: "Make the start URL answer 200 (directly or after one redirect) and fix server errors.",
  },
  http_4xx: {
    meaning:
      "Internal URLs answer a client error (404, 410, 403): dead ends for users and bots. Only URLs no other check reports are listed here (linked ones are broken links, listed ones bad sitemap entries).",
    fix:
      "Restore the page, redirect it (301) to the best replacement, or remove the links pointing to it.",
  },
  http_5xx: {
    meaning: "Internal URLs answer a server error; repeated errors slow down or stop crawling.",
    fix: "Check the server logs for these URLs and fix the failing code or upstream.",
  },
  fetch_failed: {
    meaning:
      "These URLs could not be fetched at all (timeout, DNS or connection failure); certificate failures are reported as tls_invalid.",
    fix: "Make sure the server answers within a few seconds and the certificate is valid.",
  },
  noindex: {
    meaning:
      "These pages ask search engines not to index them, so they will not appear in results.",
    fix: "Remove noindex from pages that should rank; keep it only on pages meant to stay out.",
  },
  noindex_sitewide: {
    meaning: "The home page or most of the site is noindex: the site will vanish from results.",
    fix:
      "Remove the noindex meta tag or X-Robots-Tag header (often left over from a staging setup).",
  },
  head_tags_in_body: {
    meaning:
      "robots, description or canonical tags placed in <body> are ignored by search engines.",
    fix: "Move these tags into <head>, before any element that closes it early.",
  },
  sitemap_missing: {
    meaning:
      "Without a sitemap crawlers find pages only through links; new or deep pages are slow to show up.",
    fix: "Publish /sitemap.xml listing your canonical URLs and add a Sitemap: line to robots.txt.",
  },
  sitemap_invalid: {
    meaning: "A sitemap search engines cannot read, or one that breaks the protocol's limits.",
    fix:
      "Fix each listed problem: valid XML with a urlset or sitemapindex root, absolute same-site <loc> URLs, at most 50,000 URLs and 50 MB per file.",
  },
  sitemap_bad_entries: {
    meaning:
      "The sitemap lists URLs that redirect, fail, are noindex, blocked or canonicalised elsewhere, which wastes crawl budget and sends mixed signals.",
    fix: "List only indexable, canonical URLs that answer 200.",
  },
  canonical_invalid: {
    meaning:
      "An empty, relative or conflicting canonical is ignored, so search engines pick one themselves.",
    fix: "Give each page exactly one absolute canonical URL.",
  },
  canonical_suspicious: {
    meaning:
      "A canonical to the home page, to http or to another host usually comes from a template mistake and can drop pages from results.",
    fix: "Point the canonical at the page's own preferred https URL unless the move is intended.",
  },
  canonical_target_bad: {
    meaning:
      "The canonical points to a URL that redirects, fails or is noindex, so the signal is lost.",
    fix: "Point the canonical at the final, indexable 200 URL.",
  },
  canonical_chain: {
    meaning:
      "A canonical that points at a page with a canonical of its own is a chain: search engines may stop at the first hop or ignore the hint. A loop (the chain comes back to a page already in it, after any number of hops) names no canonical at all.",
    fix: "Point every canonical straight at the final URL, which must name itself as canonical.",
  },
  sitemap_missing_indexable: {
    meaning:
      "An indexable page the sitemap leaves out is found only through links, later and less reliably; a sitemap that is not complete also hides which pages the site means to have indexed.",
    fix:
      "List every indexable, canonical page in the sitemap (generate it from the same source as the pages).",
  },
  x_robots_tag_non_html: {
    meaning:
      "A file sent with X-Robots-Tag noindex (or nofollow, none) stays out of search results or passes no links; right for private downloads, a loss for a PDF or image meant to be found.",
    fix:
      "Keep the header on files that must not be indexed; remove it from those that should be found.",
  },
  hreflang_invalid: {
    meaning: "Malformed hreflang annotations are ignored, so the wrong language version may rank.",
    fix: "Use ISO 639-1 language codes (optionally -region) or x-default, with absolute URLs.",
  },
  hreflang_cluster: {
    meaning:
      "An incomplete hreflang set (no self reference, or a language mapped to two URLs) is unreliable. x-default is recommended, not required.",
    fix: "List every language version on every page, including the page itself, once per language.",
  },
  hreflang_no_return: {
    meaning:
      "hreflang works only in pairs: when the alternate does not annotate the page back, search engines may ignore both annotations and show the wrong language version.",
    fix:
      "Give every page of a language cluster the same full set of hreflang links, each pointing back to all the others.",
  },
  hreflang_target_bad: {
    meaning:
      "Search engines use an hreflang alternate only when it is the indexable canonical URL: an alternate that redirects, fails, is noindex or canonicalised elsewhere drops out of the cluster, and that language version may not be shown.",
    fix:
      "Point every hreflang link at the final, indexable, self-canonical 200 URL of each language version.",
  },
  hreflang_x_default_missing: {
    meaning:
      "Without x-default, a user whose language matches none of the alternates gets whichever version the search engine picks; x-default names the fallback (usually a language chooser or the main version). Recommended by Google, not required.",
    fix:
      'Add <link rel="alternate" hreflang="x-default" href="..."> to every page of the cluster, pointing at the fallback page.',
  },
  viewport_missing: {
    meaning:
      "Without a viewport tag phones render a shrunken desktop page; mobile ranking suffers.",
    fix: 'Add <meta name="viewport" content="width=device-width, initial-scale=1"> to <head>.',
  },
  viewport_not_responsive: {
    meaning: "A fixed-width viewport does not adapt to the screen.",
    fix: 'Use content="width=device-width, initial-scale=1" instead of a pixel width.',
  },
  zoom_disabled: {
    meaning: "Disabling pinch-zoom hurts readers who need larger text (an accessibility failure).",
    fix: "Remove user-scalable=no and any maximum-scale below 5 from the viewport.",
  },
  legacy_plugins: {
    meaning: "Plugin content (object, embed, applet) does not show on most phones and browsers.",
    fix: "Replace plugins with native HTML (video, audio, img, canvas).",
  },
  slow_ttfb: {
    meaning: "The server takes over 800 ms (median) to start answering; every page feels slow.",
    fix: "Add page caching or a CDN, and profile slow database queries and server code.",
  },
  very_slow_ttfb: {
    meaning:
      "The server takes over 1.8 s (median) to start answering; users leave, crawling slows.",
    fix: "Cache rendered pages, move to faster hosting or a CDN, and fix the slow backend calls.",
  },
  html_too_large: {
    meaning: "HTML over 2 MB is cut off by Google and slow to download.",
    fix: "Remove inlined data, images and repeated markup; paginate very long lists.",
  },
  html_large: {
    meaning: "HTML between 1 and 2 MB slows down every visit.",
    fix: "Trim inlined scripts, styles, data and repeated markup.",
  },
  no_text_compression: {
    meaning: "HTML sent uncompressed takes several times longer to download.",
    fix: "Enable gzip or brotli compression for text/html on the server or CDN.",
  },
  render_blocking_scripts: {
    meaning: "Scripts in <head> without async or defer delay the first paint.",
    fix: "Add defer (or async) to these scripts, or move them to the end of <body>.",
  },
  unsized_images: {
    meaning: "Images without width and height make the layout jump while they load (CLS).",
    fix: "Set width and height attributes (or a CSS aspect-ratio) on every <img>.",
  },
  dom_size: {
    meaning: "A very large or deep DOM slows rendering and interaction.",
    fix: "Simplify templates, remove hidden duplicates and lazy-render long lists.",
  },
  not_https: {
    meaning: "Pages served over http are marked 'Not secure' by browsers and rank lower.",
    fix: "Serve the site over https with a valid certificate and redirect http to https.",
  },
  http_not_redirected: {
    meaning: "http://host/ still serves content, so two versions of the site exist.",
    fix: "Redirect every http URL to its https version with a 301.",
  },
  tls_invalid: {
    meaning: "The TLS certificate or handshake fails: browsers show an error page.",
    fix: "Renew or reissue the certificate for the right host names and serve the full chain.",
  },
  mixed_content_active: {
    meaning: "https pages load scripts, styles or frames over http; browsers block them.",
    fix: "Load every listed resource over https (or host it yourself).",
  },
  mixed_content_passive: {
    meaning: "https pages load images or media over http; browsers warn or upgrade them.",
    fix: "Change the listed resource URLs to https.",
  },
  protocol_relative_resources: {
    meaning: "//host/path URLs depend on the page's scheme; explicit https is safer.",
    fix: "Write the listed resource URLs with https://.",
  },
  http_links: {
    meaning:
      "Internal links to http URLs cost a redirect on every click and leak the plain version.",
    fix: "Change the listed links to https URLs.",
  },
  insecure_form: {
    meaning: "Forms that submit to an http address send what users type in clear text.",
    fix: "Point the form's action at an https URL (and serve the page itself over https).",
  },
  hsts_missing: {
    meaning: "Without HSTS a first visit can be downgraded to http by an attacker.",
    fix: "Send Strict-Transport-Security: max-age=31536000 (or more) on https responses.",
  },
  csp_missing: {
    meaning:
      "Without a Content-Security-Policy an injected script runs with full rights; a report-only policy enforces nothing.",
    fix:
      "Send a Content-Security-Policy header (test it first as Content-Security-Policy-Report-Only, then enforce it).",
  },
  clickjacking_unprotected: {
    meaning:
      "Any site can show these pages in a hidden frame and trick visitors into clicking on them (clickjacking).",
    fix:
      "Send X-Frame-Options: DENY (or SAMEORIGIN), or a Content-Security-Policy with frame-ancestors 'self'.",
  },
  mime_sniffing_unprotected: {
    meaning:
      "Without X-Content-Type-Options: nosniff browsers may guess a file's type and run an uploaded file as a script or stylesheet.",
    fix: "Send X-Content-Type-Options: nosniff on every response.",
  },
  hardening_headers: {
    meaning:
      "Without a safe Referrer-Policy full URLs (with their query strings) leak to other sites.",
    fix: "Send Referrer-Policy: strict-origin-when-cross-origin (or stricter).",
  },
  version_disclosure: {
    meaning:
      "Headers or a generator tag name the server or framework software and its version, which tells attackers which known flaws to try.",
    fix:
      "Remove X-Powered-By and X-AspNet(Mvc)-Version, drop the version from Server and X-Generator (e.g. server_tokens off), and remove the generator meta tag.",
  },
  vulnerable_js_library: {
    meaning:
      "The page loads a front-end library version with published vulnerabilities (the evidence lists the advisories).",
    fix:
      "Upgrade the library to a fixed version (or remove it if unused) and update the script URL.",
  },
  http_subresources: {
    meaning:
      "An http page loads scripts, styles, frames or media from another host over http: anyone on the network path can alter them.",
    fix: "Load these resources over https (and move the page itself to https).",
  },
  cookie_flags: {
    meaning: "Cookies without Secure, HttpOnly or SameSite can be stolen or sent cross-site.",
    fix: "Set Secure (on https), HttpOnly and SameSite=Lax (or Strict) on these cookies.",
  },
  title_missing: {
    meaning: "Without a title search engines invent one, and the result is rarely clicked.",
    fix: "Give each page a unique, descriptive <title> of 20 to 60 characters.",
  },
  title_length: {
    meaning: "Very short titles say too little; long ones are cut off in results.",
    fix: "Rewrite the title to 20 to 60 characters with the page's main topic first.",
  },
  title_duplicate: {
    meaning: "Several pages share one title, so search engines cannot tell them apart.",
    fix: "Write a distinct title for each page of the group, or canonicalise true duplicates.",
  },
  meta_description_missing: {
    meaning: "Without a description search engines pick a snippet, often a poor one.",
    fix: "Add a meta description of 50 to 160 characters that sums up the page.",
  },
  meta_description_length: {
    meaning: "Very short descriptions are replaced; long ones are cut off in results.",
    fix: "Rewrite it to 50 to 160 characters.",
  },
  meta_description_duplicate: {
    meaning: "Several pages share one description, which makes their results look the same.",
    fix: "Write a distinct description for each page of the group.",
  },
  duplicate_head_tags: {
    meaning: "Several titles or descriptions in one page: search engines pick one at random.",
    fix: "Keep exactly one <title> and one meta description per page.",
  },
  h1_missing: {
    meaning: "Without an h1 the page's main topic is less clear to readers and search engines.",
    fix: "Add one visible <h1> that states the page's topic.",
  },
  heading_order: {
    meaning: "Skipped heading levels break the outline screen readers and crawlers follow.",
    fix: "Use heading levels in order (h2 under h1, h3 under h2) without jumps.",
  },
  html_lang_missing: {
    meaning: "Without a lang attribute browsers and search engines must guess the language.",
    fix: 'Add lang to <html>, e.g. <html lang="en">.',
  },
  html_lang_invalid: {
    meaning: "The lang value is not a valid language tag, so it is ignored.",
    fix: 'Use a BCP 47 tag such as "en", "en-GB" or "pt-BR".',
  },
  thin_content: {
    meaning: "Pages with little text rarely rank and can look like low-quality content.",
    fix: "Expand the page with useful text, merge it with a related page, or noindex it.",
  },
  likely_client_rendered: {
    meaning:
      "The HTML is an empty app shell; content appears only after JavaScript, which some crawlers never run.",
    fix: "Render the main content on the server (SSR or static generation).",
  },
  duplicate_content: {
    meaning: "Several URLs show the same text, so they compete and split their signals.",
    fix: "Keep one URL per content: 301-redirect or canonicalise the others to it.",
  },
  url_case_duplicates: {
    meaning:
      "The server answers the same page at URLs that differ only in letter case, so every link with another casing creates a duplicate that splits signals and wastes crawl budget.",
    fix:
      "Redirect (301) every other casing to the one lower-case URL, or at least give each variant a canonical to it; link with one casing only.",
  },
  parameter_duplicates: {
    meaning:
      "Query parameters that do not change the content (sort order, tracking, session ids) give one page many URLs; search engines index the duplicates and split signals between them.",
    fix:
      "Give the parameter variants a canonical to the URL without the parameters (or redirect), and link to the clean URL.",
  },

  near_duplicate_content: {
    meaning:
      "These pages share most of their text with another page (the evidence names it), so search engines may pick one and ignore the rest.",
    fix:
      "Merge near-identical pages (301 or canonical to the best one), or give each its own substantial content.",
  },
  broken_internal_links: {
    meaning: "Links on these pages lead to URLs that fail or answer 4xx/5xx: dead ends.",
    fix: "Change each listed link to a working URL, or restore the target page.",
  },
  broken_fragment: {
    meaning:
      "Links on these pages go to a section (#fragment) that the target page does not have: the page opens at its top instead of the section the link promised, readers lose their place, and documentation and tables of contents look broken.",
    fix:
      "Give the target the id the link names (id= on the heading or section), or change the link's fragment to one of the target's ids; the evidence names the link, its target and the missing anchor.",
  },
  internal_redirect_links: {
    meaning: "Links point at URLs that redirect, costing a hop on every click and crawl.",
    fix: "Update each listed link to the redirect's final URL.",
  },
  redirect_chain: {
    meaning: "Redirects that redirect again are slow and may not be followed to the end.",
    fix: "Point the first redirect straight at the final URL (one hop).",
  },
  redirect_loop: {
    meaning: "Redirects that loop (or never end) make the URLs unreachable.",
    fix: "Break the loop: make one URL in the cycle answer 200 and point the others at it.",
  },
  meta_refresh: {
    meaning: "A meta refresh is a slow client-side redirect that search engines handle poorly.",
    fix: "Replace it with a server-side 301 redirect.",
  },
  uncrawlable_links: {
    meaning:
      "Links without a real href (javascript:, empty, missing) cannot be followed by crawlers.",
    fix: "Use <a href> with a real URL; use <button> for actions that are not navigation.",
  },
  link_text_generic: {
    meaning:
      "Anchor text like 'click here' tells readers and search engines nothing about the target.",
    fix: "Describe the target in the link text, e.g. 'pricing for teams'.",
  },
  image_alt_missing: {
    meaning: "Images without alt are invisible to screen readers and image search.",
    fix: 'Add alt text that says what the image shows (alt="" for pure decoration).',
  },
  structured_data_invalid: {
    meaning: "JSON-LD that does not parse or lacks @context/@type is ignored: no rich results.",
    fix: "Fix the JSON syntax and add @context and @type; check it with a schema validator.",
  },
  orphan_page: {
    meaning: "No crawled page links to these sitemap URLs, so they get little authority.",
    fix: "Link to each orphan from a relevant page, or remove it from the sitemap if obsolete.",
  },
  single_inlink_pages: {
    meaning:
      "A page that only one internal link reaches gets little internal link equity and is lost if that link goes; crawlers find and revisit it less.",
    fix: "Link the page from related pages, hubs or navigation, not only from one place.",
  },
  deep_page: {
    meaning: "Pages more than 4 clicks from the home page are crawled less and rank worse.",
    fix: "Link to them from higher-level pages, hubs or navigation.",
  },
  url_hygiene: {
    meaning: "Uppercase letters, underscores, spaces or very long URLs cause duplicates and typos.",
    fix: "Use lowercase, hyphen-separated paths and redirect the old URLs.",
  },
  doctype_missing: {
    meaning:
      "Without a doctype browsers render in quirks mode, emulating 1990s engines: the box model, table sizing and line heights differ from what the CSS says, so layouts break in ways that differ between browsers.",
    fix: "Start every page with <!DOCTYPE html>, before anything but comments and whitespace.",
  },
  doctype_quirks: {
    meaning:
      "This doctype is there, but the HTML standard's parsing rules answer it with quirks mode (an HTML 4.0 or older DTD, HTML 4.01 Transitional or Frameset without its system identifier, a misspelt or malformed doctype, or a doctype after other content): the page renders as if it had none.",
    fix:
      "Replace it with <!DOCTYPE html> as the very first thing in the document, then check the layout (quirks-mode CSS may need fixes once standards mode applies).",
  },
  doctype_limited_quirks: {
    meaning:
      "XHTML 1.0 and HTML 4.01 Transitional/Frameset doctypes put browsers in limited-quirks (almost standards) mode, which differs from standards mode only in how images in table cells are sized. Information, not a fault.",
    fix: "Optional: use <!DOCTYPE html> to get full standards mode.",
  },
  charset_missing: {
    meaning: "An undeclared encoding can garble non-ASCII text.",
    fix: 'Send charset=utf-8 in Content-Type or put <meta charset="utf-8"> first in <head>.',
  },
  picture_without_img: {
    meaning: "A <picture> with no <img> renders nothing in some clients.",
    fix: "Add an <img> fallback inside each <picture>.",
  },
  broken_resources: {
    meaning:
      "A page loads an image, script, stylesheet, font, video or frame from the site that answers an error or does not answer: visitors see broken images or unstyled, half-working pages, and search engines render the page without it.",
    fix:
      "Restore each listed file at its URL, or change the element named in the evidence to a URL that answers 200 (after a redirect at most).",
  },
  dead_end_page: {
    meaning: "Pages with no links leave readers and crawlers nowhere to go.",
    fix: "Add links to related pages, the navigation or a next step.",
  },
};

/** Texts of the rendered-audit checks (domain/render/checks.ts) and agent-readiness (checks/agent.ts). */
const STEP_CHECK_DOCS: Record<string, CheckDoc> = {
  noindex_only_in_raw_html: {
    meaning:
      "Google reads the served HTML first; a noindex there may keep the page out of the index before any script removes it.",
    fix: "Serve the page without noindex in the HTML; do not rely on JavaScript to remove it.",
  },
  noindex_only_after_js: {
    meaning:
      "Crawlers that do not run scripts index the page; Google drops it after rendering: two different answers.",
    fix: "Decide: put noindex in the served HTML (or X-Robots-Tag), or stop the script adding it.",
  },
  canonical_changed_by_js: {
    meaning: "Two canonicals (served and rendered) leave the choice to the search engine.",
    fix: "Serve the intended canonical in the HTML and do not change it from scripts.",
  },
  content_requires_js: {
    meaning:
      "Most AI crawlers and many tools do not run JavaScript: to them the page is nearly empty, and Google indexes it later.",
    fix: "Render the main content on the server (SSR or static generation) and hydrate it.",
  },
  title_changed_by_js: {
    meaning: "Search results may show the rendered title, link previews the served one.",
    fix: "Serve the final title in the HTML.",
  },
  h1_changed_by_js: {
    meaning: "The page's main heading differs between what is served and what is shown.",
    fix: "Serve the final h1 in the HTML.",
  },
  links_only_after_js: {
    meaning:
      "Crawlers that do not render never discover these pages; Google finds them only after rendering, later.",
    fix: "Put navigation and content links in the served HTML as <a href> elements.",
  },
  console_errors: {
    meaning: "Scripts failed while the page loaded; parts of the page may not work or show.",
    fix: "Open the page with the browser console and fix the listed errors.",
  },
  lcp_slow: {
    meaning:
      "The main content appears late on a phone; LCP is a Core Web Vital and a ranking signal.",
    fix:
      "Serve the LCP image or text early: smaller images, preload, fewer render-blocking scripts and styles.",
  },
  cls_high: {
    meaning: "Content moves while loading: readers tap the wrong thing; CLS is a Core Web Vital.",
    fix:
      "Reserve space for images, ads and embeds (width/height, aspect-ratio); do not insert content above what is shown.",
  },
  tbt_high: {
    meaning: "Long scripts block the main thread, so taps and typing wait (the lab proxy of INP).",
    fix: "Split long tasks, defer or remove scripts that are not needed at load.",
  },
  transfer_size_large: {
    meaning: "Heavy pages load slowly on mobile networks and cost visitors data.",
    fix: "Compress and resize images, drop unused scripts and fonts.",
  },
  tap_targets_small: {
    meaning: "Links and buttons too small or too close are hard to hit on a phone.",
    fix: "Make tap targets at least 48x48 CSS px or space them out.",
  },
  text_too_small: {
    meaning: "Text below 12 px is hard to read on a phone without zooming.",
    fix: "Use a base font size of 16 px and keep body text at 12 px or more.",
  },
  content_wider_than_viewport: {
    meaning: "The page scrolls sideways on a phone: content is cut off or tiny.",
    fix:
      "Use a responsive layout: max-width: 100% on images and tables, no fixed widths wider than the screen.",
  },
  requests_refused: {
    meaning:
      "The page asks for internal or unresolvable addresses: broken for visitors, and a sign of leftover development URLs.",
    fix: "Replace the listed resource URLs with public ones or remove them.",
  },
  llms_txt_missing: {
    meaning:
      "No /llms.txt: language-model tools have no curated guide to the site (an emerging convention, not a ranking factor).",
    fix:
      "Optional: add /llms.txt (llmstxt.org): an H1 with the site's name, a short summary, H2 sections of links.",
  },
  llms_txt_malformed: {
    meaning: "The /llms.txt exists but tools that follow the format may misread it.",
    fix:
      "Start with one '# Name' line, then an optional '> summary', then '## Section' lists of '- [name](url): notes'.",
  },
  ai_crawler_rules: {
    meaning:
      "Which AI crawlers robots.txt lets in: blocking training crawlers (GPTBot, CCBot, Google-Extended) is a choice; blocking search and user agents (OAI-SearchBot, ChatGPT-User, PerplexityBot, Claude-User) keeps the site out of AI answers.",
    fix:
      "Nothing to fix: check the lists match your intent and adjust the User-agent groups if not.",
  },
  structured_data_missing: {
    meaning: "Pages without JSON-LD give search engines and AI tools no typed facts about them.",
    fix: "Add JSON-LD for what the page is (Article, Product, Organization, BreadcrumbList...).",
  },
  structured_data_coverage: {
    meaning: "Only part of the indexable pages carry JSON-LD (the evidence has the share).",
    fix: "Add JSON-LD to the page templates that lack it (see structured_data_missing).",
  },
};
Object.assign(CHECK_DOCS, STEP_CHECK_DOCS);

/** Structured data validation (checks/structured_data.ts, rules in json_ld.ts). */
const STRUCTURED_DATA_DOCS: Record<string, CheckDoc> = {
  rich_result_invalid: {
    meaning:
      "Google shows no rich result (price, rating, breadcrumb trail, FAQ, business details) for structured data that lacks a property its documentation marks required, or has it in the wrong shape.",
    fix:
      "Add each listed property at the JSON path given (a Product's name and offers with a plain numeric price, each breadcrumb's position, name and item, each FAQ question's name and acceptedAnswer.text, a business's name and address); recheck with Google's Rich Results Test.",
  },
  schema_type_unknown: {
    meaning:
      "A @type that is not a schema.org type (a typo, a wrong case) or a @context that is not schema.org makes search engines ignore that node and everything it says.",
    fix:
      "Spell the type exactly as schema.org does (the evidence suggests the closest one, e.g. Product for Prodcut) and set @context to https://schema.org.",
  },
};
Object.assign(CHECK_DOCS, STRUCTURED_DATA_DOCS);

/** The texts of a check; a check added without an entry falls back to its `detects` line. */
export function checkDoc(check: Check): CheckDoc {
  return CHECK_DOCS[check.id] ??
    { meaning: check.detects, fix: "See the check's description on /docs/checks." };
}

/** The `agents` category (checks/agents.ts); each names the source it follows. */
const AGENTS_DOCS: Record<string, CheckDoc> = {
  ai_bot_blocked_by_server: {
    meaning:
      "robots.txt invites this bot but the server (often a CDN or firewall bot rule) answers it with a block or a challenge while browsers get the page: the bot's product (AI answers, AI search, training) never sees the site, and robots.txt does not tell you (bot classes as in Semrush's Site Audit).",
    fix:
      "If the block is unintended, allow the listed user agents in the CDN/WAF bot rules (verified-bot lists, Cloudflare AI Crawl Control); if intended, also disallow them in robots.txt so the two agree.",
  },
  ai_bot_access: {
    meaning:
      "Which bot classes (on-demand fetchers, AI search, training, classic search) may fetch the site, by robots.txt and by real requests: reported, not judged.",
    fix: "Nothing to fix: check the matrix matches your intent.",
  },
  content_signals: {
    meaning:
      "robots.txt says how its content may be used once fetched (Cloudflare's Content-Signal; the IETF aipref Content-Usage): reported, not judged.",
    fix: "Nothing to fix: check the declared uses match your intent.",
  },
  content_signal_conflict: {
    meaning:
      "A content signal allows a use (search, AI input, training) while robots.txt keeps every bot that makes it out, or uses a value neither vocabulary knows: bots read the two as contradicting each other.",
    fix:
      "Make them agree: set the use to no (Content-Signal) / n (Content-Usage), or let those bots in; spell values as in the vocabulary (yes/no, y/n).",
  },
  markdown_on_request_missing: {
    meaning:
      "The home page does not answer Markdown to Accept: text/markdown (isitagentready.com's check; 3.9 % of top sites do). Agents then read the HTML: information, not a defect.",
    fix:
      "Optional: answer Accept: text/markdown with a Markdown version of the page (Vary: Accept), e.g. Cloudflare's Markdown for Agents.",
  },
  agent_link_headers_missing: {
    meaning:
      "The home page's HTTP headers point agents nowhere (no Link to an alternate, a description or an API): information, not a defect.",
    fix:
      'Optional: send Link headers, e.g. </.well-known/api-catalog>; rel="api-catalog" (RFC 9727) or </index.md>; rel="alternate"; type="text/markdown".',
  },
  agent_discovery_missing: {
    meaning:
      "No API catalog, OAuth metadata, MCP server card or Web Bot Auth directory: agents cannot discover an API or tools from the domain alone. Information, not a defect: a site without an API needs none.",
    fix:
      "Optional: publish the documents that apply (RFC 9727 api-catalog, RFC 9728 oauth-protected-resource, an MCP server card).",
  },
  api_catalog_invalid: {
    meaning:
      "The API catalog is there but not an RFC 9727 linkset (RFC 9264 JSON): agents that read it find no API.",
    fix:
      'Serve {"linkset":[{"anchor":"https://…/api","service-desc":[{"href":"…/openapi.json"}]}]} as application/linkset+json.',
  },
  oauth_metadata_invalid: {
    meaning:
      "OAuth discovery metadata is there but invalid: a client must reject metadata whose resource / issuer does not name the origin it came from (RFC 9728 §3.3, RFC 8414 §3.3), so agents cannot authorize.",
    fix:
      "Fix the listed members: resource (RFC 9728) or issuer (RFC 8414) equal to this origin, response_types_supported, endpoint URLs.",
  },
  mcp_server_card_invalid: {
    meaning:
      "The MCP server card (SEP-2127) is there but unreadable or incomplete: clients cannot find the server's endpoint from it.",
    fix:
      "Give it name, version and remotes entries with type (streamable-http) and an https url, as the server-card schema says.",
  },
  web_bot_auth_directory_invalid: {
    meaning:
      "The Web Bot Auth key directory is there but holds no usable keys: sites cannot verify this operator's signed bot requests.",
    fix:
      'Serve {"keys":[JWK…]} with each key\'s kty (Ed25519: kty OKP, crv, x) as application/http-message-signatures-directory+json.',
  },
  pay_per_crawl: {
    meaning:
      "These pages answer 402 Payment Required (Cloudflare pay per crawl, x402): crawlers are asked to pay. A price, not a broken page; search engines that do not pay do not see them.",
    fix: "Nothing to fix if intended; else exempt search crawlers from the payment rule.",
  },
};
Object.assign(
  CHECK_DOCS,
  AGENTS_DOCS,
  {
    webmcp_tools: {
      meaning:
        "The page offers browsing agents tools through WebMCP (W3C community draft; Chrome origin trial from 149): listed, not judged.",
      fix: "Nothing to fix: check the list is what you mean to offer.",
    },
    webmcp_tool_invalid: {
      meaning:
        "An agent cannot call a WebMCP tool without a valid name, a description it can choose by, an execute function and an object inputSchema (Lighthouse Agentic Browsing checks the same).",
      fix:
        'Register each tool with name (A-Z a-z 0-9 _ . -), description, inputSchema {"type":"object","properties":{…}} and execute.',
    },
    agent_accessibility: {
      meaning:
        "Browsing agents find and operate controls through the accessibility tree: a button without a name or an invalid role is invisible or ambiguous to them (Lighthouse Agentic Browsing, axe-core rules).",
      fix:
        "Give every control an accessible name (text, aria-label, label), use valid roles and ARIA, do not hide focusable elements.",
    },
  } satisfies Record<string, CheckDoc>,
);

/** The doc URL of a check: its anchor on `/docs/checks`. */
export function checkDocUrl(baseUrl: string, checkId: string): string {
  return `${baseUrl}/docs/checks#${checkId}`;
}

/** Check ids without texts (a test keeps this empty). */
export function undocumentedChecks(): string[] {
  return ALL_CHECKS.filter((c) => !(c.id in CHECK_DOCS)).map((c) => c.id);
}
