import { atomically } from "../../kv/atomic.ts";
import { ApiError, atomic, type Deps, keys, list, newId, read, readMany } from "../platform/mod.ts";
import { canSee, SANDBOX_LIMITS } from "../identity/mod.ts";
import { checkUrlTarget, PUBLIC_HOST_TEXT, TargetRefusedError } from "../net/mod.ts";
import type { KeyMode } from "../identity/types.ts";
import type { ProjectRecord } from "./types.ts";
import type { SubscriptionRecord } from "../billing/types.ts";

/**
 * Normalises a site URL: http(s) only, no credentials, lowercase host (WHATWG URL does that),
 * no default port, no fragment, duplicate slashes in the path folded. The query is kept, since
 * some sites route on it. Returns null when the input is not an acceptable site URL.
 *
 * @example
 * ```ts
 * normalizeSiteUrl("HTTPS://Example.com:443//blog#top"); // "https://example.com/blog"
 * ```
 */
export function normalizeSiteUrl(input: string): string | null {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  if (url.username || url.password || !url.hostname) return null;
  if (url.hostname.endsWith(".")) url.hostname = url.hostname.replace(/\.+$/, "");
  if (!url.hostname) return null;
  url.hash = "";
  url.pathname = url.pathname.replace(/\/{2,}/g, "/");
  let out = url.toString();
  // A bare origin keeps no trailing slash, so "https://a.com" and "https://a.com/" are one site.
  if (url.pathname === "/" && !url.search) out = out.replace(/\/$/, "");
  return out;
}

export interface CreateProjectInput {
  url: string;
  name?: string;
  language?: string;
  country?: string;
}

/**
 * Refuses a site whose host is an internal address (loopback, private, link-local, the cloud
 * metadata address, …) or does not resolve, through the one address guard, so such a URL is
 * refused at creation rather than when its first audit runs, after a sandbox's one project slot
 * is spent. Same words for both cases (`PUBLIC_HOST_TEXT`). `ALLOW_PRIVATE_TARGETS` lifts it.
 */
async function refuseInternalSite(deps: Deps, url: string): Promise<void> {
  if (deps.config.allowPrivateTargets) return;
  try {
    await checkUrlTarget(url, {
      allowPrivate: false,
      resolver: deps.resolver,
      signal: AbortSignal.timeout(5_000),
    });
  } catch (err) {
    if (err instanceof TargetRefusedError) {
      throw new ApiError("invalid_request", `url: ${PUBLIC_HOST_TEXT}`);
    }
    throw err;
  }
}

/**
 * Creates a project. Sandbox keys are capped at one project per account: the account's counter is
 * checked and bumped in the same commit, so parallel requests cannot create two.
 */
export async function createProject(
  deps: Deps,
  caller: { accountId: string; mode: KeyMode },
  input: CreateProjectInput,
): Promise<ProjectRecord> {
  const { kv, clock } = deps;
  const url = normalizeSiteUrl(input.url);
  if (!url) throw new ApiError("invalid_request", "url: must be a valid http(s) URL");
  await refuseInternalSite(deps, url);
  const sandbox = caller.mode === "sandbox";
  return await atomically(kv, async () => {
    const accountEntry = await read(kv, keys.account(caller.accountId));
    const account = accountEntry.value;
    if (!account) throw new ApiError("unauthorized", "Unknown account");
    if (sandbox && account.upgradedAt) {
      throw new ApiError(
        "sandbox_limit_reached",
        "This account was upgraded: its projects are live now. Create projects with its live " +
          "key (the upgrade's GET /v1/upgrades/{id} handed it out)",
      );
    }
    if (sandbox && account.sandboxProjects >= SANDBOX_LIMITS.projects) {
      throw new ApiError(
        "sandbox_limit_reached",
        `Sandbox keys are limited to ${SANDBOX_LIMITS.projects} project; upgrade to add more`,
      );
    }
    const now = clock.now();
    const project: ProjectRecord = {
      id: newId("proj", now),
      accountId: account.id,
      url,
      name: input.name ?? new URL(url).hostname,
      status: "setup",
      language: (input.language ?? "en").toLowerCase(),
      country: (input.country ?? "US").toUpperCase(),
      sandbox,
      createdAt: now,
      counts: { keywords: 0, articles: 0, audits: 0 },
      latestAudit: null,
    };
    const op = atomic(kv)
      .check(accountEntry)
      .check({ key: keys.project(account.id, project.id), versionstamp: null })
      .set(accountEntry.key, {
        ...account,
        projectsCount: account.projectsCount + 1,
        sandboxProjects: account.sandboxProjects + (sandbox ? 1 : 0),
      })
      .set(keys.project(account.id, project.id), project);
    return { op, result: project };
  });
}

/** The account's projects a caller of `mode` may see (`canSee`), with subscriptions, newest first. */
export async function listProjects(
  deps: Deps,
  accountId: string,
  mode: KeyMode,
): Promise<{ project: ProjectRecord; subscription: SubscriptionRecord | null }[]> {
  const projects: ProjectRecord[] = [];
  for await (const e of list(deps.kv, { prefix: keys.projectsOfAccount(accountId) })) {
    if (canSee(mode, e.value.sandbox)) projects.push(e.value);
  }
  projects.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  const out: { project: ProjectRecord; subscription: SubscriptionRecord | null }[] = [];
  for (let i = 0; i < projects.length; i += 10) {
    const batch = projects.slice(i, i + 10);
    const subs = await readMany(deps.kv, batch.map((p) => keys.subscription(p.id)));
    batch.forEach((project, j) => out.push({ project, subscription: subs[j].value }));
  }
  return out;
}

/**
 * One project of the account, or 404 (foreign ids look the same as missing ones, and so do live
 * projects to a sandbox caller).
 */
export async function getProject(
  deps: Deps,
  accountId: string,
  projectId: string,
  mode: KeyMode,
): Promise<{ entry: Deno.KvEntry<ProjectRecord>; subscription: SubscriptionRecord | null }> {
  const [entry, sub] = await readMany(deps.kv, [
    keys.project(accountId, projectId),
    keys.subscription(projectId),
  ]);
  if (!entry.value || !canSee(mode, entry.value.sandbox)) {
    throw new ApiError("not_found", `No project '${projectId}' on this account`);
  }
  return { entry, subscription: sub.value };
}

/**
 * Whether a caller of `mode` may see work (audits, articles) on a project: live keys see all of
 * their account's, a sandbox key only its sandbox side (`canSee`). Reads the project only for a
 * sandbox caller.
 */
export async function projectVisibleTo(
  deps: Deps,
  accountId: string,
  projectId: string,
  mode: KeyMode,
): Promise<boolean> {
  if (mode === "live") return true;
  const project = (await read(deps.kv, keys.project(accountId, projectId))).value;
  return project !== null && canSee(mode, project.sandbox);
}
