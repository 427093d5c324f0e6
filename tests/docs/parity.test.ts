import assert from "node:assert/strict";
import { withApp } from "../helpers/app.ts";
import {
  ADDITIVE_ENDPOINTS,
  buildSameApp,
  documentOperations,
  fetchDocument,
  INTERFACE_ENDPOINTS,
  servedV1Operations,
  UNDOCUMENTED_V1,
} from "./helpers.ts";

Deno.test("every /v1 route the app serves is in the document, and every operation is served", () =>
  withApp(async (app) => {
    const doc = await fetchDocument(app);
    const documented = documentOperations(doc);
    const served = servedV1Operations(await buildSameApp(app)).filter((op) =>
      !UNDOCUMENTED_V1.has(op)
    );
    assert.equal(
      served.length,
      INTERFACE_ENDPOINTS.length + ADDITIVE_ENDPOINTS.length,
      `served: ${served.join(", ")}`,
    );
    assert.deepEqual(
      served.filter((op) => !documented.includes(op)),
      [],
      "served but not documented",
    );
    assert.deepEqual(
      documented.filter((op) => !served.includes(op)),
      [],
      "documented but not served",
    );
    // The document describes /v1 only: operator routes (/admin/*, /webhooks/stripe) and pages stay out.
    assert.deepEqual(documented.filter((op) => !op.split(" ")[1].startsWith("/v1/")), []);
  }));

Deno.test("the 20 interface endpoints are all documented and all answer (not 404/405)", () =>
  withApp(async (app) => {
    const doc = await fetchDocument(app);
    const documented = documentOperations(doc);
    assert.deepEqual(INTERFACE_ENDPOINTS.filter((op) => !documented.includes(op)), []);
    assert.deepEqual(ADDITIVE_ENDPOINTS.filter((op) => !documented.includes(op)), []);
    const known: readonly string[] = [...INTERFACE_ENDPOINTS, ...ADDITIVE_ENDPOINTS];
    assert.equal(
      documented.length,
      known.length,
      `extra operations: ${documented.filter((o) => !known.includes(o))}`,
    );
    for (const op of [...INTERFACE_ENDPOINTS, ...ADDITIVE_ENDPOINTS]) {
      const [method, path] = op.split(" ");
      const concrete = path.replace(/\{[^}]+\}/g, "x_missing");
      const res = await app.req(method, concrete, { body: method === "POST" ? {} : undefined });
      // Unauthenticated: 401 on bearer routes, 400/201/200 on the public ones; never a routing miss.
      assert.notEqual(res.status, 405, `${op} answered ${res.status} ${res.text}`);
      assert.ok(!String(res.body?.error?.message ?? "").startsWith("No route"), `${op} is routed`);
    }
  }));
