/**
 * The `agents` category: how AI crawlers and agents see a site. Who may fetch it (robots.txt
 * and, because a CDN or firewall can keep a bot out without robots.txt saying so, real
 * requests with each bot class's user-agent token), what it says about the use of its content
 * (Content Signals and the IETF `Content-Usage` successor), what it offers agents (Markdown on
 * request, `Link` headers, discovery documents) and whether those documents are well formed.
 *
 * What is only information (no Markdown, no discovery document, a pay-per-crawl answer) is
 * severity info: listed, never scored. Google's own guide (May 2026) says no special file or
 * markup is needed to appear in its AI features, so absence is not a defect; a document that
 * is there but malformed is (agents that read it are misled), and so is a bot the site's
 * robots.txt invites but its server turns away (the site owner usually does not know).
 *
 * The checks run in the agent-readiness step after the crawl (`crawl/agent_probes.ts`); the
 * parsers and validators here are pure.
 *
 * @module
 */
import type { SiteCheck, StepCheck } from "../types.ts";

/** The four bot classes, as Semrush's Site Audit splits AI and search bots. */
export type BotClass = "on_demand" | "ai_search" | "training" | "classic_search";

/**
 * The user-agent tokens of each class (their owners' published tokens). The first is the one
 * sampled on every page; the home page is asked as each of them. `Google-Extended` is a
 * robots.txt token only (no crawler sends it), so it is read from robots.txt and never sent.
 */
export const BOT_CLASSES: Readonly<Record<BotClass, readonly string[]>> = {
  on_demand: ["ChatGPT-User", "Claude-User", "Perplexity-User"],
  ai_search: ["OAI-SearchBot", "Claude-SearchBot", "PerplexityBot"],
  training: ["GPTBot", "ClaudeBot", "CCBot", "Google-Extended"],
  classic_search: ["Googlebot", "Bingbot"],
};

/** Tokens that are only ever read from robots.txt, never sent by a crawler. */
export const ROBOTS_ONLY_TOKENS: ReadonlySet<string> = new Set(["Google-Extended"]);

export const BOT_CLASS_ORDER: readonly BotClass[] = [
  "on_demand",
  "ai_search",
  "training",
  "classic_search",
];

const agent = (
  id: string,
  severity: StepCheck["severity"],
  weight: Pick<StepCheck, "impact" | "effort">,
  title: string,
  detects: string,
): StepCheck => ({ id, category: "agents", severity, ...weight, title, detects, scope: "agent" });

export const AGENTS_CHECKS: readonly StepCheck[] = [
  agent(
    "ai_bot_blocked_by_server",
    "warning",
    { impact: 3, effort: "medium" },
    "Bot turned away by the server, not by robots.txt",
    "A sampled page answers a bot class's user-agent token with 401/403/429/451 or a " +
      "challenge while a browser gets 2xx and robots.txt allows that bot: a CDN or firewall " +
      "block robots.txt does not show.",
  ),
  agent(
    "ai_bot_access",
    "info",
    { impact: 0, effort: "low" },
    "Some bot classes may not fetch the site",
    "The access matrix per bot class (on-demand fetchers, AI search, training, classic " +
      "search), from robots.txt and from real requests, when any class is kept out.",
  ),
  agent(
    "content_signals",
    "info",
    { impact: 0, effort: "low" },
    "Content Signals / Content-Usage declared",
    "robots.txt declares how its content may be used (Cloudflare's Content-Signal, the " +
      "IETF aipref Content-Usage): reported, not judged.",
  ),
  agent(
    "content_signal_conflict",
    "warning",
    { impact: 2, effort: "low" },
    "Content signal contradicts robots.txt",
    "A Content-Signal/Content-Usage allows a use while robots.txt disallows every bot " +
      "of the class that does it, or a signal outside the vocabulary.",
  ),
  agent(
    "markdown_on_request_missing",
    "info",
    { impact: 0, effort: "medium" },
    "No Markdown on request",
    "The home page asked with Accept: text/markdown answers something else " +
      "(isitagentready.com's check; information, not a defect).",
  ),
  agent(
    "agent_link_headers_missing",
    "info",
    { impact: 0, effort: "low" },
    "No Link header for agents",
    "The home page sends no HTTP Link header to an alternate, a description or an API " +
      "(rel alternate, describedby, service-desc, service-doc, api-catalog).",
  ),
  agent(
    "agent_discovery_missing",
    "info",
    { impact: 0, effort: "medium" },
    "No discovery document for agents",
    "None of /.well-known/api-catalog, oauth-protected-resource, " +
      "oauth-authorization-server, mcp/server-card.json, " +
      "http-message-signatures-directory is published.",
  ),
  agent(
    "api_catalog_invalid",
    "warning",
    { impact: 1, effort: "low" },
    "Invalid API catalog",
    "/.well-known/api-catalog is not an RFC 9727 linkset (RFC 9264 JSON: a `linkset` " +
      "array of objects with an `anchor` and link targets with `href`).",
  ),
  agent(
    "oauth_metadata_invalid",
    "warning",
    { impact: 1, effort: "low" },
    "Invalid OAuth discovery metadata",
    "oauth-protected-resource (RFC 9728: `resource` naming this origin) or " +
      "oauth-authorization-server (RFC 8414: `issuer` naming this origin, " +
      "`response_types_supported`) is not valid JSON or lacks required members.",
  ),
  agent(
    "mcp_server_card_invalid",
    "warning",
    { impact: 1, effort: "low" },
    "Invalid MCP server card",
    "/.well-known/mcp/server-card.json (SEP-2127) is not JSON or lacks `name`, `version` " +
      "or a `remotes` entry with a `type` and an http(s) `url`.",
  ),
  agent(
    "web_bot_auth_directory_invalid",
    "warning",
    { impact: 1, effort: "low" },
    "Invalid Web Bot Auth key directory",
    "/.well-known/http-message-signatures-directory is not JSON with a non-empty `keys` " +
      "array of JWKs (each with `kty`; Ed25519 keys with `crv` and `x`).",
  ),
];

/**
 * Crawled pages that answered 402: their own finding, and no 4xx or broken link (the records
 * pass keeps them out of those: finalize/fetch_outcomes.ts). The crawl does not pay.
 */
export const payPerCrawl: SiteCheck = {
  id: "pay_per_crawl",
  impact: 0,
  effort: "low",
  category: "agents",
  severity: "info",
  title: "Pages answer 402 (pay per crawl)",
  detects: "Pages answer HTTP 402 Payment Required (Cloudflare pay per crawl with " +
    "`crawler-price`, x402 with `payment-required`): a price, not a broken page.",
  scope: "site",
  evaluate: (s) =>
    s.attempted > 0 ? { eligible: s.attempted, affected: s.paid.count, items: s.paid.items } : null,
};

// --- Access answers -----------------------------------------------------------------------

/** How one request with a bot's user agent was answered. */
export type AccessVerdict = "ok" | "blocked" | "payment" | "error";

/**
 * The verdict of a status and its headers. A challenge is a 403/503 carrying a CDN's
 * mitigation header (Cloudflare `cf-mitigated: challenge`) or a 429: the bot never sees the
 * page either way. 402 is a price, kept apart from a block (pay per crawl, x402).
 */
export function accessVerdict(status: number, headers: Headers | null): AccessVerdict {
  if (status === 0) return "error";
  if (status === 402) return "payment";
  if (headers?.get("cf-mitigated")) return "blocked";
  if (status === 401 || status === 403 || status === 429 || status === 451) return "blocked";
  if (status >= 200 && status < 400) return "ok";
  return "error";
}

/** What a 402 says about its price (the pay-per-crawl headers), for the evidence. */
export function paymentScheme(headers: Headers): string {
  if (headers.has("crawler-price")) return "pay_per_crawl";
  if (headers.has("payment-required")) return "x402";
  if (/^\s*payment\b/i.test(headers.get("www-authenticate") ?? "")) return "http_payment";
  return "unspecified";
}

// --- Content Signals ----------------------------------------------------------------------

/** The uses each vocabulary names, and the bot classes that make each use. */
const SIGNAL_USES: Record<string, readonly BotClass[]> = {
  // Cloudflare's Content Signals (yes/no).
  "search": ["classic_search", "ai_search"],
  "ai-input": ["on_demand", "ai_search"],
  "ai-train": ["training"],
};
const USAGE_USES: Record<string, readonly BotClass[]> = {
  // IETF aipref vocabulary (y/n); `bots` covers all automated processing.
  "bots": ["on_demand", "ai_search", "training", "classic_search"],
  "train-ai": ["training"],
  "train-genai": ["training"],
  "ai-use": ["on_demand", "ai_search"],
  "search": ["classic_search", "ai_search"],
};

/** One use a signal line declares. */
export interface SignalEntry {
  /** `Content-Signal` or `Content-Usage`. */
  directive: string;
  use: string;
  allowed: boolean;
  /** The line in robots.txt (1-based). */
  line: number;
  /** The user-agent group it sits in (`*` outside any). */
  group: string;
  /** Content-Usage's optional path the preference is bound to. */
  path: string | null;
  /** The bot classes that make this use (empty: a use outside the vocabulary). */
  classes: readonly BotClass[];
}

/** The signals of a robots.txt and the lines that are not in either vocabulary. */
export interface ContentSignals {
  entries: SignalEntry[];
  problems: string[];
}

/** Reads `Content-Signal:` and `Content-Usage:` lines (both vocabularies, leniently). */
export function parseContentSignals(body: string): ContentSignals {
  const entries: SignalEntry[] = [];
  const problems: string[] = [];
  let group = "*";
  let lastWasAgent = false;
  const lines = body.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length && entries.length < 50; i++) {
    const line = lines[i].replace(/#.*$/, "").trim();
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    let value = line.slice(colon + 1).trim();
    if (key === "user-agent") {
      group = lastWasAgent ? `${group}, ${value}` : value;
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if (key !== "content-signal" && key !== "content-usage") continue;
    const usage = key === "content-usage";
    const directive = usage ? "Content-Usage" : "Content-Signal";
    let path: string | null = null;
    if (usage && value.startsWith("/")) {
      const sp = value.search(/\s/);
      path = sp < 0 ? value : value.slice(0, sp);
      value = sp < 0 ? "" : value.slice(sp).trim();
    }
    const vocab = usage ? USAGE_USES : SIGNAL_USES;
    const yes = usage ? "y" : "yes";
    const no = usage ? "n" : "no";
    if (value === "") {
      if (problems.length < 20) problems.push(`line ${i + 1}: empty ${directive}`);
      continue;
    }
    for (const part of value.split(",")) {
      const m = /^\s*([a-z0-9-]+)\s*=\s*([a-z]+)\s*$/i.exec(part);
      const use = m?.[1].toLowerCase();
      const v = m?.[2].toLowerCase();
      if (!m || !use || !(use in vocab) || (v !== yes && v !== no)) {
        if (problems.length < 20) {
          problems.push(`line ${i + 1}: "${part.trim()}" is not in the ${directive} vocabulary`);
        }
        continue;
      }
      entries.push({
        directive,
        use,
        allowed: v === yes,
        line: i + 1,
        group,
        path,
        classes: vocab[use],
      });
    }
  }
  return { entries, problems };
}

/**
 * Uses a signal allows while robots.txt keeps out every bot of the class that makes them
 * (`blockedClasses`: classes none of whose tokens may fetch the start URL). Said the other way
 * round (a use refused while the bots may crawl) is no conflict: that is what the signals are
 * for (crawl me for search, do not train on me).
 */
export function signalConflicts(
  signals: ContentSignals,
  blockedClasses: ReadonlySet<BotClass>,
): string[] {
  const out: string[] = [];
  for (const e of signals.entries) {
    if (!e.allowed) continue;
    const blocked = e.classes.filter((c) => blockedClasses.has(c));
    if (blocked.length > 0 && blocked.length === e.classes.length) {
      out.push(
        `line ${e.line}: ${e.directive} ${e.use} allows it, but robots.txt disallows ` +
          `every ${blocked.join(" and ")} bot`,
      );
    }
  }
  return [...out, ...signals.problems].slice(0, 20);
}

// --- Discovery documents ------------------------------------------------------------------

/** The discovery documents read, by the key their evidence names them with. */
export const DISCOVERY_DOCUMENTS = {
  api_catalog: "/.well-known/api-catalog",
  oauth_protected_resource: "/.well-known/oauth-protected-resource",
  oauth_authorization_server: "/.well-known/oauth-authorization-server",
  mcp_server_card: "/.well-known/mcp/server-card.json",
  web_bot_auth: "/.well-known/http-message-signatures-directory",
} as const;

export type DiscoveryDocument = keyof typeof DISCOVERY_DOCUMENTS;

/** Which check reports a malformed document of each kind. */
export const DISCOVERY_CHECK: Record<DiscoveryDocument, string> = {
  api_catalog: "api_catalog_invalid",
  oauth_protected_resource: "oauth_metadata_invalid",
  oauth_authorization_server: "oauth_metadata_invalid",
  mcp_server_card: "mcp_server_card_invalid",
  web_bot_auth: "web_bot_auth_directory_invalid",
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isHttpUrl = (v: unknown): boolean => {
  if (typeof v !== "string") return false;
  try {
    return /^https?:$/.test(new URL(v).protocol);
  } catch {
    return false;
  }
};
/** An identifier naming this origin: the origin itself, with or without a trailing slash. */
const namesOrigin = (v: unknown, origin: string): boolean =>
  typeof v === "string" && v.replace(/\/$/, "") === origin;

/**
 * The problems of one discovery document's body (empty: valid). `origin` is the site's: OAuth
 * metadata must name the origin it is published on (RFC 9728 §3.3, RFC 8414 §3.3), or a
 * client must reject it.
 */
export function discoveryProblems(
  kind: DiscoveryDocument,
  body: string,
  origin: string,
): string[] {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return ["not valid JSON"];
  }
  if (!isObject(doc)) return ["not a JSON object"];
  const p: string[] = [];
  switch (kind) {
    case "api_catalog": {
      const ls = doc.linkset;
      if (!Array.isArray(ls) || ls.length === 0) return ["no non-empty `linkset` array"];
      ls.forEach((ctx, i) => {
        if (!isObject(ctx)) return void p.push(`linkset[${i}] is not an object`);
        if (typeof ctx.anchor !== "string") p.push(`linkset[${i}] has no \`anchor\``);
        const rels = Object.entries(ctx).filter(([k]) => k !== "anchor");
        if (rels.length === 0) p.push(`linkset[${i}] has no link relation`);
        for (const [rel, targets] of rels) {
          const ok = Array.isArray(targets) &&
            targets.every((t) => isObject(t) && typeof t.href === "string");
          if (!ok) p.push(`linkset[${i}].${rel} is not an array of targets with \`href\``);
        }
      });
      break;
    }
    case "oauth_protected_resource":
      if (!namesOrigin(doc.resource, origin)) {
        p.push(`\`resource\` must name ${origin} (RFC 9728 §3.3)`);
      }
      if (
        doc.authorization_servers !== undefined &&
        !(Array.isArray(doc.authorization_servers) &&
          doc.authorization_servers.every(isHttpUrl))
      ) p.push("`authorization_servers` is not an array of URLs");
      break;
    case "oauth_authorization_server":
      if (!namesOrigin(doc.issuer, origin)) {
        p.push(`\`issuer\` must name ${origin} (RFC 8414 §3.3)`);
      }
      if (!Array.isArray(doc.response_types_supported)) {
        p.push("no `response_types_supported` array");
      }
      for (const k of ["authorization_endpoint", "token_endpoint", "jwks_uri"]) {
        if (doc[k] !== undefined && !isHttpUrl(doc[k])) p.push(`\`${k}\` is not a URL`);
      }
      break;
    case "mcp_server_card": {
      if (typeof doc.name !== "string" || doc.name === "") p.push("no `name`");
      if (typeof doc.version !== "string" || doc.version === "") p.push("no `version`");
      const remotes = doc.remotes;
      if (!Array.isArray(remotes) || remotes.length === 0) p.push("no `remotes` entry");
      else {
        remotes.forEach((r, i) => {
          if (!isObject(r) || typeof r.type !== "string" || !isHttpUrl(r.url)) {
            p.push(`remotes[${i}] needs a \`type\` and an http(s) \`url\``);
          }
        });
      }
      break;
    }
    case "web_bot_auth": {
      const ks = doc.keys;
      if (!Array.isArray(ks) || ks.length === 0) return ["no non-empty `keys` array"];
      ks.forEach((k, i) => {
        if (!isObject(k) || typeof k.kty !== "string") {
          return void p.push(`keys[${i}] has no \`kty\``);
        }
        if (k.kty === "OKP" && (typeof k.crv !== "string" || typeof k.x !== "string")) {
          p.push(`keys[${i}] (OKP) needs \`crv\` and \`x\``);
        }
      });
      break;
    }
  }
  return p.slice(0, 20);
}

// --- Link headers -------------------------------------------------------------------------

/** Link relations that point an agent somewhere useful. */
const AGENT_RELS = new Set([
  "alternate",
  "describedby",
  "service-desc",
  "service-doc",
  "api-catalog",
]);

/** The `rel` values of a Link header that agents use (alternates, descriptions, APIs). */
export function agentLinkRels(link: string | null): string[] {
  if (!link) return [];
  const found = new Set<string>();
  for (const m of link.matchAll(/;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))/gi)) {
    for (const r of (m[1] ?? m[2]).toLowerCase().split(/\s+/)) {
      if (AGENT_RELS.has(r)) found.add(r);
    }
  }
  return [...found].sort();
}

/** Whether a response is Markdown (by type, or a text/plain body that reads as Markdown). */
export function isMarkdownAnswer(contentType: string | null, body: string): boolean {
  const t = (contentType ?? "").toLowerCase();
  if (t.includes("text/markdown") || t.includes("text/x-markdown")) return true;
  if (!t.includes("text/plain")) return false;
  return !/^\s*</.test(body) && /^\s*#{1,6} \S/m.test(body);
}
