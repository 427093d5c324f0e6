/**
 * The http probe of an https site: does `http://host/` redirect to https, serve the site in the
 * clear, or not answer? Read by `http_not_redirected`.
 *
 * @module
 */
import type { SiteFacts } from "../types.ts";
import { fetchFollow, type FetchSettings } from "./fetcher.ts";

export async function probeHttp(s: FetchSettings, start: URL): Promise<SiteFacts["httpProbe"]> {
  if (start.protocol !== "https:") return "not_applicable";
  const { res } = await fetchFollow(s, `http://${start.hostname}/`, {
    readBody: false,
    timeoutMs: Math.min(s.timeoutMs, 5_000),
  });
  if (!res) return "unreachable";
  if (res.url.startsWith("https:")) return "redirects_to_https";
  if (res.status >= 200 && res.status < 400) return "serves_http";
  return "unreachable";
}
