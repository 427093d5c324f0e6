/**
 * Where the headless browser comes from and how it is started: the `@sparticuz/chromium` npm
 * package ships a Chromium binary inside the package, so a machine with only Node/npm (or Deno's
 * npm support) has a real browser without an OS package or a download at run time.
 *
 * The browser renders pages we do not trust, so it is started holding nothing worth stealing and
 * with as little attack surface as the machine allows:
 *
 * - **No inherited environment.** playwright-core passes `process.env` to the browser unless
 *   `env` is given (`options.env ? envArrayToObject(options.env) : process.env` in its launcher;
 *   nothing is merged into a given `env`), so the service's secrets (`ADMIN_TOKEN`, `STRIPE_*`,
 *   `OPENAI_API_KEY`, ...) would be readable in `/proc/<pid>/environ` of every browser process.
 *   We always pass `browserEnvironment(home)`: a fixed `PATH`, `LANG`, and `HOME`/`TMPDIR`/XDG
 *   dirs inside a private temporary directory made for this browser and removed when it exits.
 *   The packaged binary finds its fonts without `FONTCONFIG_*` and its libraries without
 *   `LD_LIBRARY_PATH` (tried: same text metrics and pages as with the full environment).
 * - **No GPU, no WebGL, no SwiftShader.** The package's graphics flags (`--use-gl=angle`,
 *   `--use-angle=swiftshader`, `--enable-unsafe-swiftshader`, `--in-process-gpu`,
 *   `--ignore-gpu-blocklist`) and playwright-core's own default `--enable-unsafe-swiftshader` are
 *   removed; `--disable-gpu --use-gl=disabled --disable-software-rasterizer --disable-webgl
 *   --disable-3d-apis` are added. Pages are composited in software (the render checks, lab
 *   metrics and screenshots work the same).
 * - **The sandbox where the kernel allows it** (`sandboxPlan`): Chromium's namespace sandbox
 *   needs unprivileged user namespaces, and Chromium refuses any sandbox when it runs as root. As
 *   root we launch with `--no-sandbox`; otherwise sandboxed, and if that fails for want of
 *   namespaces (a kernel or AppArmor that forbids them) once without it, remembered for the rest
 *   of the process and logged. docs/render.md says what isolates the browser without a sandbox.
 *
 * @example
 * ```ts
 * const { browser } = await launchChromium();
 * ```
 *
 * @module
 */
// playwright-core and @sparticuz/chromium (and axe-core, agent_view.ts) load on a browser's first
// launch, not with the module: every worker imports this one, most never render, and the three held
// ~7 MiB of a worker child's RSS (116 -> 109 MiB idle).
import type { Browser, LaunchOptions } from "playwright-core";

/**
 * Flags of the package's defaults that would weaken a browser pointed at pages we do not trust
 * (they suit its original Lambda use, where it renders the owner's own pages). `--no-sandbox` is
 * decided per machine instead (playwright-core adds it unless `chromiumSandbox` is true).
 */
const UNSAFE_FLAGS = new Set([
  "--disable-web-security",
  "--allow-running-insecure-content",
  "--disable-site-isolation-trials",
  "--no-sandbox",
]);

/**
 * The package's GPU and WebGL stack: SwiftShader (a software GPU that runs page-supplied shaders
 * in-process, a well-known exploit surface, hence "unsafe") and the GPU thread inside the browser
 * process. Dropped, by name or by prefix.
 */
const GPU_FLAGS = new Set([
  "--in-process-gpu",
  "--ignore-gpu-blocklist",
  "--enable-unsafe-swiftshader",
  "--enable-unsafe-webgpu",
]);
const GPU_FLAG_PREFIXES = ["--use-gl=", "--use-angle=", "--use-vulkan", "--enable-webgl"];

/**
 * What replaces them: software compositing only, no WebGL or other 3D API for pages.
 * `--use-gl=disabled` also keeps the headless shell from choosing its own default
 * (`--use-gl=angle --use-angle=swiftshader-webgl`, passed on to its child processes): measured,
 * no process of the browser then maps libGLESv2, libEGL, Vulkan or SwiftShader.
 */
const NO_GPU_FLAGS = [
  "--disable-gpu",
  "--use-gl=disabled",
  "--disable-software-rasterizer",
  "--disable-webgl",
  "--disable-3d-apis",
];

/** Default switches of playwright-core itself that the browser must not get. */
const IGNORED_DEFAULT_ARGS = ["--enable-unsafe-swiftshader"];

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

/** True for a flag of the package's that is dropped (unsafe or GPU). */
export function isDroppedFlag(flag: string): boolean {
  return UNSAFE_FLAGS.has(flag) || GPU_FLAGS.has(flag) ||
    GPU_FLAG_PREFIXES.some((p) => flag.startsWith(p));
}

/**
 * The flags among `args` (one process's command line) that a browser process must never carry:
 * a GPU in the browser process, SwiftShader in any mode, a GL or ANGLE backend other than
 * `--use-gl=disabled`, WebGL or WebGPU forced on. The render test reads every process of the
 * browser against this.
 */
export function forbiddenFlags(args: string[]): string[] {
  return args.filter((a) =>
    /swiftshader/i.test(a) || /^--in-process-gpu|^--ignore-gpu-blocklist|^--use-angle=/.test(a) ||
    (a.startsWith("--use-gl=") && a !== "--use-gl=disabled") ||
    /^--enable-(webgl|unsafe-webgpu)/.test(a)
  );
}

/** The whole environment the browser gets: nothing from ours, only paths of its own. */
export function browserEnvironment(home: string): Record<string, string> {
  return {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    LANG: "en_US.UTF-8",
    HOME: home,
    TMPDIR: home,
    XDG_CONFIG_HOME: `${home}/.config`,
    XDG_CACHE_HOME: `${home}/.cache`,
    XDG_DATA_HOME: `${home}/.local/share`,
  };
}

export type ChromiumLaunchOptions =
  & Pick<
    LaunchOptions,
    "executablePath" | "args" | "headless" | "env" | "chromiumSandbox" | "ignoreDefaultArgs"
  >
  & { args: string[]; env: Record<string, string> };

/**
 * Launch options for playwright-core: the packaged binary (unpacked once to /tmp), its flags
 * minus the unsafe and GPU ones, the environment for `home`, and the sandbox as `sandbox` says.
 */
export async function chromiumLaunchOptions(
  o: { home: string; sandbox: boolean },
): Promise<ChromiumLaunchOptions> {
  const packagedChromium = (await import("@sparticuz/chromium")).default;
  const executablePath = await packagedChromium.executablePath();
  const args = packagedChromium.args.filter((a: string) => !isDroppedFlag(a));
  for (const flag of [...QUIET_FLAGS, ...NO_GPU_FLAGS]) if (!args.includes(flag)) args.push(flag);
  return {
    executablePath,
    args,
    headless: true,
    env: browserEnvironment(o.home),
    chromiumSandbox: o.sandbox,
    ignoreDefaultArgs: IGNORED_DEFAULT_ARGS,
  };
}

/**
 * Flags of the package's defaults dropped for rendering untrusted pages: one process per renderer
 * (a page that crashes or hangs its renderer does not take the browser with it, and the pool can
 * measure and cap the browser's memory per process). Multi-process is also what lets the
 * sandbox confine renderers.
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
 * Launch options of the rendering pool: as `chromiumLaunchOptions`, multi-process, every network
 * path black-holed, and `marker` as an inert switch so the pool can find the browser's processes
 * in /proc (playwright-core does not expose the pid of a launched browser).
 */
export async function renderLaunchOptions(
  marker: string,
  o: { home: string; sandbox: boolean },
): Promise<ChromiumLaunchOptions> {
  const base = await chromiumLaunchOptions(o);
  const args = base.args.filter((a) => !SINGLE_PROCESS_FLAGS.has(a));
  args.push(...BLACKHOLE_FLAGS, `--serpwright-render=${marker}`);
  return { ...base, args };
}

/** Whether to ask for the sandbox, and why (reported in logs and tests). */
export interface SandboxPlan {
  sandbox: boolean;
  reason: string;
}

/** Set once a sandboxed launch failed for want of kernel support: not tried again. */
let sandboxUnavailable: string | null = null;

/**
 * The sandbox decision before a launch: off as root (Chromium refuses to sandbox as root: "Running
 * as root without --no-sandbox is not supported"; dropping to another user would need the
 * unpacked binary, its fonts and playwright's profile directory readable by that user, and a
 * setuid-capable wrapper), off when a sandboxed launch of this process already failed, off when
 * the kernel says user namespaces are disabled; on otherwise.
 */
export function sandboxPlan(): SandboxPlan {
  if (currentUid() === 0) {
    return { sandbox: false, reason: "running as root: Chromium refuses its sandbox as root" };
  }
  if (sandboxUnavailable) return { sandbox: false, reason: sandboxUnavailable };
  for (const [file, off] of USERNS_SWITCHES) {
    if (readSysctl(file) === off) {
      return { sandbox: false, reason: `unprivileged user namespaces are off (${file} = ${off})` };
    }
  }
  return { sandbox: true, reason: "not root; user namespaces available" };
}

const USERNS_SWITCHES: [string, string][] = [
  ["/proc/sys/user/max_user_namespaces", "0"],
  ["/proc/sys/kernel/unprivileged_userns_clone", "0"],
];

/** The plan the last successful launch of this process used, or null before any. */
let lastLaunch: SandboxPlan | null = null;

/** How the last browser of this process was launched (sandboxed or not, and why). */
export function lastLaunchSandbox(): SandboxPlan | null {
  return lastLaunch;
}

/**
 * Launches the packaged Chromium as planned above: a private home directory (removed when the
 * browser exits or the launch fails), the minimal environment, the sandbox per `sandboxPlan`
 * with one unsandboxed retry when the sandbox turns out to be unusable. `marker` given: the
 * rendering pool's options (multi-process, black-holed network, marker switch).
 */
export async function launchChromium(
  o: { marker?: string; timeout?: number } = {},
): Promise<{ browser: Browser; sandbox: SandboxPlan }> {
  let plan = sandboxPlan();
  try {
    return await launchOnce(plan, o);
  } catch (e) {
    if (!plan.sandbox || !isSandboxFailure(e)) throw e;
    sandboxUnavailable = `the sandboxed launch failed: ${firstLine(e)}`;
    plan = sandboxPlan();
    console.warn(JSON.stringify({
      level: "warn",
      event: "render_sandbox_unavailable",
      message: "Chromium's sandbox is unusable on this machine; rendering without it",
      reason: sandboxUnavailable,
    }));
    return await launchOnce(plan, o);
  }
}

async function launchOnce(
  plan: SandboxPlan,
  o: { marker?: string; timeout?: number },
): Promise<{ browser: Browser; sandbox: SandboxPlan }> {
  const home = await Deno.makeTempDir({ prefix: "serpwright-chromium-" });
  const removeHome = () => Deno.remove(home, { recursive: true }).catch(() => {});
  try {
    const opts = o.marker
      ? await renderLaunchOptions(o.marker, { home, sandbox: plan.sandbox })
      : await chromiumLaunchOptions({ home, sandbox: plan.sandbox });
    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({ ...opts, timeout: o.timeout ?? 30_000 });
    browser.on("disconnected", removeHome);
    lastLaunch = plan;
    return { browser, sandbox: plan };
  } catch (e) {
    await removeHome();
    throw e;
  }
}

/**
 * A launch that died because the sandbox could not start (no user namespaces, AppArmor's
 * restriction of them on Ubuntu 23.10+, no setuid helper, root): Chromium logs "No usable
 * sandbox!" or points at crbug.com/638180 (root) or crbug.com/357670 (namespaces), and
 * playwright-core rewrites those logs as "Chromium sandboxing failed!". Not just any "sandbox":
 * every launch error quotes the command line, which holds `--disable-setuid-sandbox`.
 */
export function isSandboxFailure(e: unknown): boolean {
  const text = e instanceof Error ? e.message : String(e);
  return /Chromium sandboxing failed!|No usable sandbox!|crbug\.com\/(638180|357670)/.test(text);
}

function currentUid(): number | null {
  try {
    return Deno.uid();
  } catch {
    return null; // no --allow-sys: we cannot tell, and try the sandbox
  }
}

function readSysctl(path: string): string | null {
  try {
    return Deno.readTextFileSync(path).trim();
  } catch {
    return null;
  }
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split("\n").slice(0, 3).join(" ").slice(
    0,
    300,
  );
}
