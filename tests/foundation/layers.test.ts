/**
 * The layers of design.md, held by the module graph itself (`deno info --json main.ts`, which
 * follows the dynamic imports of the capabilities' routes too). The rules, in one place:
 *
 * - imports point down only: `kv` imports no layer above it, `domain` no adapter, job or
 *   application module, `app` no adapter or job (runtime and type-only imports alike);
 * - no module reaches itself through imports, type-only ones included (a circle makes load order
 *   matter, and a big type circle hides the next runtime one);
 * - a capability's `types.ts` (its persisted shapes) imports only other `types.ts`;
 * - `domain/platform`, the kernel, imports no other domain folder except `types.ts` leaves;
 * - the key table (domain/platform/store.ts, kv/keys.ts) imports only `types.ts` leaves and the
 *   kernel it is built on;
 * - no two domain folders import each other at runtime, except the known pairs listed below,
 *   which only shrink;
 * - code outside a capability's folder (`domain/<cap>/`) imports it only through its public face,
 *   `domain/<cap>/mod.ts`, or its persisted shapes, `domain/<cap>/types.ts` (tests may reach in),
 *   except the known edges listed below, which only shrink.
 */
import assert from "node:assert/strict";

interface Graph {
  /** Runtime imports: module → modules, paths relative to the repository root. */
  code: Map<string, Set<string>>;
  /** Type-only imports. */
  types: Map<string, Set<string>>;
}

async function moduleGraph(): Promise<Graph> {
  const root = new URL("../../", import.meta.url).href;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "main.ts"],
    cwd: new URL(root),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier?: string }; type?: { specifier?: string } }[];
    }[];
  };
  const graph: Graph = { code: new Map(), types: new Map() };
  const local = (s?: string) => s?.startsWith(root) ? s.slice(root.length) : null;
  for (const m of info.modules) {
    const from = local(m.specifier);
    if (!from) continue;
    for (const dep of m.dependencies ?? []) {
      const code = local(dep.code?.specifier);
      const type = local(dep.type?.specifier);
      if (code) add(graph.code, from, code);
      else if (type) add(graph.types, from, type);
    }
  }
  return graph;
}

function add(map: Map<string, Set<string>>, from: string, to: string): void {
  let set = map.get(from);
  if (!set) map.set(from, set = new Set());
  set.add(to);
}

/** The layer of a module: its top folder (`main.ts` and `capabilities.ts` are the root). */
function layer(path: string): string {
  return path.includes("/") ? path.split("/")[0] : "root";
}

/** Which layers each layer must not import, at runtime or for types. */
const FORBIDDEN: Record<string, string[]> = {
  kv: ["domain", "app", "jobs", "routes", "root"],
  domain: ["app", "jobs", "routes", "root"],
  app: ["jobs", "routes", "root"],
  jobs: ["routes", "root"],
};

Deno.test("layers: imports point down only", async () => {
  const graph = await moduleGraph();
  assert.ok(graph.code.size > 100, "the graph holds the service's modules");
  const breaches: string[] = [];
  for (const map of [graph.code, graph.types]) {
    for (const [from, tos] of map) {
      for (const to of tos) {
        if (FORBIDDEN[layer(from)]?.includes(layer(to))) breaches.push(`${from} → ${to}`);
      }
    }
  }
  assert.deepEqual(breaches, []);
});

/** Tarjan's strongly connected components of a graph: every component of two or more nodes. */
function circles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** Runtime and type-only imports together. */
function allImports({ code, types }: Graph): Map<string, Set<string>> {
  const all = new Map<string, Set<string>>();
  for (const map of [code, types]) {
    for (const [from, tos] of map) for (const to of tos) add(all, from, to);
  }
  return all;
}

const isTypes = (path: string) => path.endsWith("/types.ts");

/** The domain folder of a module (`domain/audits/record.ts` → `domain/audits`), or null. */
function domainFolder(path: string): string | null {
  const parts = path.split("/");
  return parts[0] === "domain" && parts.length > 2 ? `${parts[0]}/${parts[1]}` : null;
}

/** Every import of the modules `from` selects, as `from → to`, that `allowed` refuses. */
function refused(
  graph: Graph,
  from: (path: string) => boolean,
  allowed: (from: string, to: string) => boolean,
): string[] {
  const out: string[] = [];
  for (const [f, tos] of allImports(graph)) {
    if (!from(f)) continue;
    for (const to of tos) if (!allowed(f, to)) out.push(`${f} → ${to}`);
  }
  return out.sort();
}

Deno.test("layers: no import circle, type-only imports included", async () => {
  assert.deepEqual(circles(allImports(await moduleGraph())), []);
});

/**
 * Known exceptions to "a types.ts imports only types.ts": the stored page facts are derived from the
 * fact families that collect them (page_facts.ts), so that a new fact is declared only in its
 * family's file. Only shrinks.
 */
const TYPES_IMPORT_KNOWN = [
  "domain/audit_engine/types.ts → domain/audit_engine/page_facts.ts",
];

Deno.test("layers: a types.ts imports only other types.ts", async () => {
  const graph = await moduleGraph();
  const found = refused(graph, isTypes, (_, to) => isTypes(to));
  assert.deepEqual(
    found.filter((e) => !TYPES_IMPORT_KNOWN.includes(e)),
    [],
    "new non-leaf imports",
  );
  assert.deepEqual(
    TYPES_IMPORT_KNOWN.filter((e) => !found.includes(e)),
    [],
    "a known exception is gone: drop it from TYPES_IMPORT_KNOWN",
  );
});

/**
 * Known exceptions to the kernel's rule: `Deps` names the browser pool's class for its type
 * (type-only; an interface of what the domain asks of it would end this). Only shrinks.
 */
const PLATFORM_IMPORT_KNOWN = [
  "domain/platform/deps.ts → domain/render/mod.ts",
];

Deno.test("layers: domain/platform imports no other domain folder but its types.ts", async () => {
  const graph = await moduleGraph();
  const found = refused(
    graph,
    (f) => domainFolder(f) === "domain/platform",
    (_, to) => !domainFolder(to) || domainFolder(to) === "domain/platform" || isTypes(to),
  );
  assert.deepEqual(found.filter((e) => !PLATFORM_IMPORT_KNOWN.includes(e)), []);
  assert.deepEqual(
    PLATFORM_IMPORT_KNOWN.filter((e) => !found.includes(e)),
    [],
    "a known exception is gone: drop it from PLATFORM_IMPORT_KNOWN",
  );
  for (const [from, tos] of graph.code) {
    if (domainFolder(from) !== "domain/platform") continue;
    for (const to of tos) {
      assert.ok(!PLATFORM_IMPORT_KNOWN.includes(`${from} → ${to}`), `${from} → ${to} is type-only`);
    }
  }
});

Deno.test("layers: the key table imports only types.ts leaves and its kernel", async () => {
  const graph = await moduleGraph();
  const kernel = (to: string) =>
    isTypes(to) || to.startsWith("domain/platform/") || to === "kv/keys.ts" || to === "kv/typed.ts";
  const found = refused(
    graph,
    (f) => f === "domain/platform/store.ts" || f === "kv/keys.ts",
    (_, to) => kernel(to),
  );
  assert.deepEqual(found, []);
});

/**
 * Domain folders that still import each other at runtime (issue 30), as components of the folder
 * graph. Only shrinks: a new folder in a component, or a new component, fails.
 */
const FOLDER_CIRCLES_KNOWN: string[][] = [
  // The crawl drives the renderer (crawl/render_steps.ts → render/sample.ts, checks/index.ts →
  // render/checks.ts); the renderer parses with the engine's collector (render/renderer.ts →
  // page_facts.ts) and its checks use the engine's helpers.
  ["domain/audit_engine", "domain/render"],
  // The Stripe webhook (billing/stripe_events.ts) applies an upgrade's payment (upgrades/payment.ts),
  // which grants credits and plans through billing.
  ["domain/billing", "domain/upgrades"],
];

Deno.test("layers: no new runtime circle between domain folders", async () => {
  const { code } = await moduleGraph();
  const folders = new Map<string, Set<string>>();
  for (const [from, tos] of code) {
    const f = domainFolder(from);
    if (!f) continue;
    for (const to of tos) {
      const t = domainFolder(to);
      if (t && t !== f) add(folders, f, t);
    }
  }
  const found = circles(folders);
  const known = (c: string[]) => FOLDER_CIRCLES_KNOWN.some((k) => c.every((f) => k.includes(f)));
  assert.deepEqual(found.filter((c) => !known(c)), [], "a new circle between domain folders");
});

/**
 * Known imports that reach past a capability's `mod.ts` (each carries a comment at the import).
 * Only shrinks: a new one fails.
 */
const FACE_BYPASS_KNOWN: string[] = [
  // Heavy SDKs a worker must not load (stripe, oauth4webapi, csv-stringify): billing's Stripe
  // side, the OAuth token endpoint and the CSV exports stay out of their mod.ts, so the few
  // adapters and use cases that need them import them directly. (A second face per capability,
  // e.g. billing/stripe.ts, would end these.)
  "app/billing/stripe_webhook.ts → domain/billing/stripe_events.ts",
  "app/machine_payments.ts → domain/billing/stripe_client.ts",
  "app/oauth/endpoints.ts → domain/identity/oauth/tokens.ts",
  "app/operations/audits.ts → domain/audits/exports.ts",
  "app/operations/billing.ts → domain/billing/checkout.ts",
  "app/operations/billing.ts → domain/billing/portal.ts",
  "app/operations/billing.ts → domain/billing/stripe_client.ts",
  "app/operations/billing.ts → domain/billing/subscription_status.ts",
  "app/operations/upgrades.ts → domain/billing/checkout.ts",
  "domain/upgrades/checkout.ts → domain/billing/checkout.ts",
  "domain/upgrades/checkout.ts → domain/billing/stripe_client.ts",
  "routes/billing.ts → domain/billing/stripe_events.ts",
  "routes/upgrades.ts → domain/billing/portal.ts",
  // upgrades/mod.ts opens checkouts (Stripe); main.ts, on every role's load, needs one constant.
  "main.ts → domain/upgrades/codes.ts",
  // jobs/mod.ts reaches net again (lifecycle → billing → identity → oauth → net): an import circle.
  "domain/net/address_guard.ts → domain/platform/job_failure.ts",
  // audit_engine ↔ render, a known folder circle: through audit_engine/mod.ts, a module circle.
  "domain/render/checks.ts → domain/audit_engine/checks/helpers.ts",
  "domain/render/renderer.ts → domain/audit_engine/facts/extract.ts",
  "domain/render/renderer.ts → domain/audit_engine/page_facts.ts",
  "domain/render/renderer.ts → domain/audit_engine/user_agents.ts",
  // platform/mod.ts re-exports deps.ts, which names the render pool (PLATFORM_IMPORT_KNOWN).
  "domain/render/service.ts → domain/platform/config.ts",
];

Deno.test("layers: a capability is imported through its mod.ts or types.ts", async () => {
  const graph = await moduleGraph();
  const face = (to: string) => to.endsWith("/mod.ts") || isTypes(to);
  const found = refused(
    graph,
    () => true,
    (from, to) => !domainFolder(to) || domainFolder(from) === domainFolder(to) || face(to),
  );
  assert.deepEqual(
    found.filter((e) => !FACE_BYPASS_KNOWN.includes(e)),
    [],
    "new imports past a mod.ts",
  );
  assert.deepEqual(
    FACE_BYPASS_KNOWN.filter((e) => !found.includes(e)),
    [],
    "a known exception is gone: drop it from FACE_BYPASS_KNOWN",
  );
});
