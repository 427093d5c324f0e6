/**
 * The audit tests' one way to audit a fixture: serve `build(origin)` on loopback (routes may need
 * the origin), run the whole stepped audit on it, always close the server.
 *
 * @example
 * ```ts
 * const { fired, findings } = await auditSite((o) => ({ "/": html(page({ links: [o + "/a"] })) }));
 * ```
 */
import { type AuditInput, runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import { type FakeSite, type Route, serveSite, TEST_CA } from "../helpers/sites.ts";

export type Routes = (origin: string) => Record<string, Route>;

type Extra = Partial<AuditInput> & { tls?: boolean };

/**
 * Audits the site `build` describes; `extra` overrides the input (`tls` serves https), or is a
 * function of the site's origin (options naming the site's URLs).
 */
export async function auditSite(build: Routes, more: Extra | ((origin: string) => Extra) = {}) {
  const tls = typeof more === "function" ? false : more.tls;
  let routes: Record<string, Route> | null = null;
  let site: FakeSite | null = null;
  site = serveSite((p) => {
    routes ??= build(site!.origin);
    return routes[p];
  }, { tls });
  const extra = typeof more === "function" ? more(site.origin) : more;
  try {
    const out = await runAuditDetailed({
      startUrl: site.url("/"),
      maxPages: 100,
      concurrency: 4,
      allowPrivate: true,
      timeoutMs: 3_000,
      ca: extra.tls ? TEST_CA : undefined,
      ...extra,
    });
    const fired = new Map(
      [...out.tallies].filter(([, t]) => t.affected > 0).map(([k, t]) => [k, t.affected]),
    );
    return {
      ...out,
      fired,
      origin: site.origin,
      hits: [...site.hits],
      probeHits: [...site.probeHits],
    };
  } finally {
    await site.close();
  }
}
