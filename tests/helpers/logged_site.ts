/**
 * A fixture site that records every request it gets: the path, the headers it was sent, when it
 * arrived and when it was answered (`performance.now()` on the server's side, the same clock the
 * test reads), so politeness and credential tests assert on what the server saw.
 */
import { type FakeSite, GOOD_HEADERS, isAgentProbe, serveSite } from "./sites.ts";

export interface LoggedRequest {
  path: string;
  method: string;
  headers: Headers;
  /** Server time the request arrived, ms (performance.now()). */
  at: number;
  /** Server time the answer left, ms. */
  answeredAt: number;
  status: number;
}

/** Answers one request; `n` counts the requests to this path so far (1 for the first). */
export type LoggedHandler = (req: Request, n: number) => Response | Promise<Response>;

export interface LoggedSite extends FakeSite {
  /** The crawl's requests (the agents probes' are in `probeLog`, and do not count in `n`). */
  log: LoggedRequest[];
  /** Requests of the agents step's probes (`isAgentProbe`: each bot class, a browser). */
  probeLog: LoggedRequest[];
  /** The requests to one path, in order. */
  to(path: string): LoggedRequest[];
}

/** An HTML answer with good headers. */
export function htmlAnswer(body: string, status = 200, extra: Record<string, string> = {}) {
  return new Response(body, { status, headers: { ...GOOD_HEADERS, ...extra } });
}

/** Serves `build(origin)`: path → handler; unknown paths answer 404. Always `close()` it. */
export function serveLogged(build: (origin: string) => Record<string, LoggedHandler>): LoggedSite {
  const log: LoggedRequest[] = [];
  const probeLog: LoggedRequest[] = [];
  const counts = new Map<string, number>();
  let routes: Record<string, LoggedHandler> | null = null;
  let site: FakeSite | null = null;
  site = serveSite((path) => ({
    handler: async (req) => {
      const at = performance.now();
      const probe = isAgentProbe(req.headers.get("user-agent"));
      const n = (counts.get(path) ?? 0) + 1;
      if (!probe) counts.set(path, n);
      routes ??= build(site!.origin);
      const h = routes[path];
      const res = h ? await h(req, n) : htmlAnswer("<!doctype html><title>Not found</title>", 404);
      (probe ? probeLog : log).push({
        path,
        method: req.method,
        headers: req.headers,
        at,
        answeredAt: performance.now(),
        status: res.status,
      });
      return res;
    },
  }));
  return {
    ...site,
    log,
    probeLog,
    to: (path) => log.filter((r) => r.path === path).sort((a, b) => a.at - b.at),
  };
}
