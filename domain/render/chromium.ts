/**
 * Where the headless browser comes from: the `@sparticuz/chromium` npm package ships a Chromium
 * binary inside the package, so a machine with only Node/npm (or Deno's npm support) has a real
 * browser without an OS package or a download at run time.
 *
 * @example
 * ```ts
 * import { chromium } from "playwright-core";
 * const browser = await chromium.launch(await chromiumLaunchOptions());
 * ```
 *
 * @module
 */
import packagedChromium from "@sparticuz/chromium";

/**
 * Flags of the package's defaults that would weaken a browser pointed at pages we do not trust
 * (they suit its original Lambda use, where it renders the owner's own pages).
 */
const UNSAFE_FLAGS = new Set([
  "--disable-web-security",
  "--allow-running-insecure-content",
  "--disable-site-isolation-trials",
]);

/**
 * Without these, Chromium keeps reaching for Google's update, sync and safe-browsing hosts; on a
 * closed network every one of those is a refused connection (and noise in the page's console).
 */
const QUIET_FLAGS = [
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

/** Launch options for playwright-core: the packaged binary (unpacked once to /tmp) and its flags. */
export async function chromiumLaunchOptions(): Promise<
  { executablePath: string; args: string[]; headless: true }
> {
  const executablePath = await packagedChromium.executablePath();
  const args = packagedChromium.args.filter((a: string) => !UNSAFE_FLAGS.has(a));
  for (const flag of QUIET_FLAGS) if (!args.includes(flag)) args.push(flag);
  return { executablePath, args, headless: true };
}

/**
 * Flags of the package's defaults dropped for rendering untrusted pages: one process per renderer
 * (a page that crashes or hangs its renderer does not take the browser with it, and the pool can
 * measure and cap the browser's memory per process).
 */
const SINGLE_PROCESS_FLAGS = new Set(["--single-process", "--no-zygote"]);

/**
 * Defence in depth for rendering (the request interception in `guarded_network.ts` is the
 * guard; these make a request that escaped it fail instead of reaching the network): every
 * connection Chromium would make itself goes to a proxy that does not exist, loopback included
 * (`<-loopback>` removes Chromium's implicit bypass), and Chromium's own DNS answers nothing, so
 * it cannot race our resolution (DNS rebinding) nor preconnect. WebRTC gets no UDP of its own.
 */
const BLACKHOLE_FLAGS = [
  "--proxy-server=socks5://blackhole.invalid:9",
  "--proxy-bypass-list=<-loopback>",
  "--host-resolver-rules=MAP * ~NOTFOUND",
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  "--dns-prefetch-disable",
];

/**
 * Launch options of the rendering pool: the packaged binary, multi-process, every network path
 * black-holed, and `marker` as an inert switch so the pool can find the browser's processes in
 * /proc (playwright-core does not expose the pid of a launched browser).
 */
export async function renderLaunchOptions(marker: string): Promise<
  { executablePath: string; args: string[]; headless: true }
> {
  const base = await chromiumLaunchOptions();
  const args = base.args.filter((a) => !SINGLE_PROCESS_FLAGS.has(a));
  args.push(...BLACKHOLE_FLAGS, `--serpwright-render=${marker}`);
  return { ...base, args };
}
