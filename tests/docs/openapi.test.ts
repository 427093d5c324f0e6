import assert from "node:assert/strict";
import SwaggerParser from "@apidevtools/swagger-parser";
import { withApp } from "../helpers/app.ts";
import {
  documentOperations,
  fetchDocument,
  INTERFACE_ENDPOINTS,
  PUBLIC_ENDPOINTS,
} from "./helpers.ts";

const RATE_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];

Deno.test("openapi.json passes swagger-parser validation as OpenAPI 3.1.0, version 1.0.0", () =>
  withApp(async (app) => {
    const doc = await fetchDocument(app);
    assert.equal(doc.openapi, "3.1.0");
    assert.equal(doc.info.version, "1.0.0");
    assert.ok(doc.info.title);
    // validate() dereferences in place: hand it a copy.
    const api = await SwaggerParser.validate(structuredClone(doc));
    assert.equal(api.info.version, "1.0.0");
    assert.deepEqual(doc.servers, [{ url: "http://localhost:8000" }]);
    // The validator is not a rubber stamp: a response without a description is refused.
    const broken = structuredClone(doc);
    broken.paths["/v1/plans"].get.responses["200"] = { content: {} };
    await assert.rejects(SwaggerParser.validate(broken));
  }));

Deno.test("openapi.json: bearer security, Idempotency-Key on POSTs, rate-limit headers everywhere", () =>
  withApp(async (app) => {
    const doc = await fetchDocument(app);
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, {
      type: "http",
      scheme: "bearer",
      description: doc.components.securitySchemes.bearerAuth.description,
    });
    for (const op of documentOperations(doc)) {
      const [method, path] = op.split(" ");
      const o = doc.paths[path][method.toLowerCase()];
      const isPublic = PUBLIC_ENDPOINTS.has(op);
      if (isPublic) {
        assert.ok(!o.security || o.security.length === 0, `${op} is public`);
      } else {
        assert.deepEqual(o.security, [{ bearerAuth: [] }], `${op} needs the bearer key`);
        assert.ok(o.responses["401"], `${op} documents 401`);
      }
      assert.ok(o.responses["429"], `${op} documents 429`);
      assert.ok(o.responses["429"].headers["Retry-After"], `${op} 429 has Retry-After`);
      assert.ok(o.summary, `${op} has a summary`);
      const idem = (o.parameters ?? []).find(
        (p: { in: string; name: string }) => p.in === "header" && p.name === "Idempotency-Key",
      );
      if (method === "POST" && path !== "/v1/webhooks") {
        assert.ok(idem, `${op} documents Idempotency-Key`);
        assert.equal(idem.required, false);
        assert.equal(idem.schema.maxLength, 200);
      } else {
        assert.equal(idem, undefined, `${op} takes no Idempotency-Key`);
      }
      for (
        const [status, r] of Object.entries<Record<string, Record<string, unknown>>>(
          o.responses,
        )
      ) {
        for (const h of RATE_HEADERS) assert.ok(r.headers?.[h], `${op} ${status} documents ${h}`);
        // Text answers document their own media type instead: the Markdown summary, the report,
        // and the report's PDF.
        const text = status === "200" &&
          ((path.endsWith(".md") && r.content?.["text/markdown"]) ||
            (op === "GET /v1/audits/{auditId}/report" && r.content?.["text/html"]) ||
            (path.endsWith(".pdf") && r.content?.["application/pdf"]));
        assert.ok(r.content?.["application/json"] || text, `${op} ${status} has a schema`);
      }
      const errors = Object.keys(o.responses).filter((s) => Number(s) >= 400);
      for (const status of errors) {
        const c = o.responses[status].content["application/json"];
        assert.equal(c.schema.$ref, "#/components/schemas/Error");
        const codes = Object.keys(c.examples ?? {});
        assert.ok(codes.length > 0, `${op} ${status} lists its codes as examples`);
        for (const code of codes) {
          assert.ok(o.responses[status].description.includes(`\`${code}\``));
          assert.equal(c.examples[code].value.error.code, code);
          assert.ok(c.examples[code].value.error.doc_url.endsWith(`/docs/errors#${code}`));
        }
      }
    }
    assert.equal(INTERFACE_ENDPOINTS.length, 20);
  }));

Deno.test("openapi.json: request bodies carry the interface's bounds and examples", () =>
  withApp(async (app) => {
    const doc = await fetchDocument(app);
    const s = doc.components.schemas;
    assert.equal(s.SignupRequest.properties.email.maxLength, 320);
    assert.deepEqual(s.SignupRequest.required, ["email"]);
    assert.equal(s.SignupRequest.properties.company_name.maxLength, 200);
    assert.deepEqual(s.SignupRequest.properties.origin.enum, ["agent", "human"]);
    assert.equal(s.CreateApiKeyRequest.properties.name.maxLength, 100);
    assert.equal(s.CreateProjectRequest.properties.url.maxLength, 500);
    assert.equal(s.CreateProjectRequest.properties.name.maxLength, 120);
    assert.equal(s.CreateProjectRequest.properties.language.minLength, 2);
    assert.equal(s.CreateProjectRequest.properties.country.maxLength, 10);
    assert.equal(s.CreateArticleRequest.properties.topic.minLength, 3);
    assert.equal(s.CreateArticleRequest.properties.topic.maxLength, 180);
    assert.equal(s.CreateArticleRequest.properties.primary_keyword.maxLength, 120);
    assert.deepEqual(s.CreateSubscriptionRequest.properties.plan_id.enum, ["basic", "pro"]);
    assert.deepEqual(s.PurchaseCreditsRequest.properties.pack_id.enum, [
      "pack_500",
      "pack_2000",
      "pack_10000",
    ]);
    assert.ok(s.CreateWebhookRequest.properties.events);
    for (const name of ["SignupRequest", "CreateProjectRequest", "CreateArticleRequest"]) {
      const props = Object.values<{ example?: unknown }>(s[name].properties);
      assert.ok(props.some((p) => p.example !== undefined), `${name} has examples`);
    }
    // Signup response: the fields the interface lists.
    assert.deepEqual(
      Object.keys(s.SignupResponse.properties).sort(),
      ["account_id", "api_key", "docs", "mode", "sandbox_limits", "upgrade_url"],
    );
    // Outbound events are described as OpenAPI 3.1 webhooks with their signature header.
    const audit = doc.webhooks["audit.completed"].post;
    assert.ok(
      audit.parameters.some((p: { name: string }) => p.name === "X-Serpwright-Signature"),
    );
  }));
