/**
 * Starting an audit: `createAudit` adopts the project's open audit or charges and creates one
 * (with its queue message) in one commit; rendered audits are priced apart and refused where
 * nothing can render (`requireRendering`, which schedules use too).
 *
 * @module
 */
import { atomically } from "../../kv/atomic.ts";
import { ApiError, atomic, type Deps, keys, newId, read, readMany } from "../platform/mod.ts";
import { canSee } from "../identity/mod.ts";
import {
  addDebit,
  chargeFor,
  type Funding,
  isActive,
  type Payer,
  readPayer,
  renderedAuditCharge,
  UNIT_PRICES,
  type WorkActor,
} from "../billing/mod.ts";
import { noteOwner, noteRecord, type RunningJobMarker } from "../jobs/mod.ts";
import type { ProjectRecord } from "../projects/types.ts";
import type { SubscriptionRecord } from "../billing/types.ts";
import { AUDIT_JOB, leaseMs, QUEUE_GRACE_MS } from "./lifecycle.ts";
import { type AuditOptions, normalizeAuditOptions, sameAuditOptions } from "./options.ts";
import type { AuditRecord, AuditTrigger } from "./record.ts";
import { sealAuditAuth, type SealedSiteAuth } from "./site_access.ts";
import type { SiteAuth } from "../audit_engine/mod.ts";

/** How an audit may reach and pace the site: staging credentials and a rate cap. */
export interface AuditAccess {
  /**
   * Staging credentials: plain (an API call; sealed here once the project is known to be the
   * caller's) or already sealed (a schedule's copy). Stored with the audit until it ends.
   */
  auth?: { plain: SiteAuth } | { sealed: SealedSiteAuth };
  /** Requests per second per host at most (the operator's `CRAWL_MAX_RPS` still caps it). */
  maxRps?: number;
}

/** What `createAudit` accepted: a new audit, or the project's queued or running one. */
export interface AuditAcceptance {
  audit: AuditRecord;
  created: boolean;
}

/**
 * Accepts an audit for `actor` (an API key's account and mode, or the account's schedule as
 * `live`). The checks run in one order: visibility (a project the actor cannot see, `canSee`, is
 * 404 `not_found` like a missing one, before anything is adopted or charged), then it returns the
 * project's queued or running audit if there is one (nothing charged), else charges it (subscription, sandbox budget or 25 credits) and creates it in one
 * commit with the project's active-audit marker, the count and the queue message. `alongside`
 * lets a caller add its own checks and writes to that same commit (a schedule claims its due slot
 * there, so a slot and its audit exist together or not at all); it may throw to abandon. A
 * rendered audit (`options.render`) is refused with 503 `rendering_unavailable` where nothing
 * renders, before anything is charged, and is charged by `renderedAuditCharge` (catalogue).
 * `options.trigger` says who starts it (an API or MCP call, or the schedule); an open audit that
 * is adopted keeps the trigger it was created with.
 *
 * `options.audit` are the audit options (options.ts), normalised against the project once it is
 * visible (a listed URL off the project's site is 400 `invalid_request`) and stored on the
 * record. An open audit is adopted only by a start with the same options; otherwise the start
 * answers 409 `audit_in_progress` naming the open audit, unless `options.adoptAny` (a schedule's
 * slot is served by whatever audit runs).
 *
 * Its own access (`options.access`: sealed staging credentials, written under `audit_auth/<id>`
 * in the creating commit, and a rate cap) goes with the audit it creates; an adopted audit keeps
 * its own. Credentials cannot go with a rendered audit (400): the browser would carry them to
 * every host.
 */
export function createAudit(
  deps: Deps,
  actor: WorkActor,
  projectId: string,
  alongside: ((op: Deno.AtomicOperation, accepted: AuditAcceptance) => Promise<void>) | undefined,
  options: {
    trigger: AuditTrigger;
    render?: boolean;
    audit?: AuditOptions;
    adoptAny?: boolean;
    access?: AuditAccess;
  },
): Promise<AuditAcceptance> {
  const { kv, clock } = deps;
  const render = options.render === true;
  const access = options.access ?? {};
  if (render && access.auth) {
    throw new ApiError(
      "invalid_request",
      "auth: staging credentials work with raw audits only (a rendered audit's browser would " +
        "send them to every host the page loads from); omit render or auth",
    );
  }
  return atomically<AuditAcceptance>(kv, async () => {
    // What a charge checks, read beside the rest (wasted when a subscription pays or the start
    // adopts an open audit; a round trip fewer on a remote KV otherwise).
    const payer = readPayer(kv, actor);
    payer.catch(() => {}); // awaited by the charge, if any
    const [projectEntry, activeEntry, subEntry] = await readMany(kv, [
      keys.project(actor.accountId, projectId),
      keys.activeAudit(projectId),
      keys.subscription(projectId),
    ]);
    const project = projectEntry.value;
    if (!project || !canSee(actor.mode, project.sandbox)) {
      throw new ApiError("not_found", `No project '${projectId}' on this account`);
    }
    const auditOptions = normalizeAuditOptions(options.audit, project.url);
    if (activeEntry.value) {
      const current = await read(kv, keys.audit(actor.accountId, activeEntry.value));
      if (
        current.value && (current.value.status === "queued" || current.value.status === "running")
      ) {
        if (!options.adoptAny && !sameAuditOptions(current.value.options, auditOptions)) {
          throw new ApiError(
            "audit_in_progress",
            `Audit ${current.value.id} of this project is ${current.value.status} with other ` +
              "options; poll it until it completes, then start this one (nothing was charged)",
            { audit_id: current.value.id, poll: `/v1/audits/${current.value.id}` },
          );
        }
        const op = atomic(kv).check(activeEntry, current);
        const result = { audit: current.value, created: false };
        await alongside?.(op, result);
        return { op, result };
      }
    }
    if (render) requireRendering(deps, "start the audit without render. Nothing was charged");
    const sealed = access.auth === undefined
      ? null
      : "sealed" in access.auth
      ? access.auth.sealed
      : await sealAuditAuth(deps, { accountId: actor.accountId, projectId }, access.auth.plain);
    const now = clock.now();
    const id = newId("aud", now);
    const op = atomic(kv).check(projectEntry, activeEntry);
    const funding = render
      ? await chargeRendered(kv, op, actor, project, subEntry, id, now, payer)
      : await chargeFor(kv, op, {
        actor,
        project,
        subscription: subEntry,
        unit: "audits",
        ref: id,
        now,
        payer,
      });
    const audit: AuditRecord = {
      id,
      accountId: actor.accountId,
      projectId,
      status: "queued",
      funding,
      createdAt: now,
      runningAt: null,
      completedAt: null,
      score: null,
      summary: null,
      error: null,
      attempts: 0,
      leaseUntil: now + leaseMs(deps, QUEUE_GRACE_MS),
      jobsCompleted: 0,
      jobsFailed: 0,
      inStep: false,
      stepToken: null,
      changes: null,
      trigger: options.trigger,
      ...(render ? { render: true, renderStats: null } : {}),
      ...(auditOptions ? { options: auditOptions } : {}),
      ...(sealed ? { auth: sealed.mask } : {}),
      ...(access.maxRps !== undefined ? { maxRps: access.maxRps } : {}),
    };
    const marker: RunningJobMarker = {
      id,
      accountId: actor.accountId,
      leaseUntil: audit.leaseUntil,
    };
    op
      .check({ key: keys.audit(actor.accountId, id), versionstamp: null })
      .set(keys.audit(actor.accountId, id), audit)
      .set(keys.auditOwner(id), actor.accountId)
      .set(keys.activeAudit(projectId), id)
      .set(keys.runningJob("audit", id), marker)
      .set(projectEntry.key, {
        ...project,
        status: "running",
        counts: { ...project.counts, audits: project.counts.audits + 1 },
      });
    if (sealed) op.set(keys.auditAuth(id), sealed);
    deps.queue.enqueueIn(op, { type: "audit", id });
    await alongside?.(op, { audit, created: true });
    // The audit's first step, when this process takes it (at once where it runs jobs from KV's
    // queue), claims it without reading its owner or its record (round trips on a remote KV).
    const committed = (versionstamp: string) => {
      noteOwner(kv, AUDIT_JOB.kind, id, actor.accountId);
      noteRecord(kv, AUDIT_JOB.kind, id, {
        accountId: actor.accountId,
        value: audit,
        versionstamp,
      });
      deps.queue.kick?.({ type: "audit", id });
    };
    return { op, result: { audit, created: true }, committed };
  });
}

/**
 * Throws 503 `rendering_unavailable` where this process cannot render pages (rendering off, Deno
 * Deploy, or no permission to launch a browser); `instead` tells the caller what to do.
 */
export function requireRendering(deps: Pick<Deps, "render">, instead: string): void {
  if (deps.render?.enabled) return;
  throw new ApiError(
    "rendering_unavailable",
    "This server cannot render pages in a browser (rendering is off, on Deno Deploy, or the " +
      `process lacks the permissions to launch one); ${instead}`,
  );
}

/**
 * The charge of a rendered audit (catalogue `renderedAuditCharge`): `pro` included, a `basic`
 * subscription pays `rendering_addon` from credits, no subscription pays `rendered_audit`;
 * sandbox actors are refused (402 `payment_required`).
 */
async function chargeRendered(
  kv: Deno.Kv,
  op: Deno.AtomicOperation,
  actor: WorkActor,
  project: ProjectRecord,
  subEntry: Deno.KvEntryMaybe<SubscriptionRecord>,
  ref: string,
  now: number,
  /** What a charge checks, read already (`readPayer`). */
  payer: Promise<Payer>,
): Promise<Funding> {
  const sub = subEntry.value;
  const plan = sub && isActive(sub, now) ? sub.plan : null;
  const charge = renderedAuditCharge(plan, actor.mode === "sandbox" ? "sandbox" : "live");
  if (charge.kind === "included") {
    op.check(subEntry);
    return { kind: "subscription" };
  }
  if (charge.kind === "refused") {
    throw new ApiError(
      "payment_required",
      "Rendered audits need the pro plan or a live key with credits; sandbox keys run raw " +
        "audits only (omit render)",
    );
  }
  // chargeFor checks the subscription entry itself: checked once per commit (at most 10 checks).
  if (plan === null) {
    return await chargeFor(kv, op, {
      actor,
      project,
      subscription: subEntry,
      unit: "audits",
      unitId: charge.unit,
      ref,
      now,
      payer,
    });
  }
  op.check(subEntry);
  const amount = UNIT_PRICES[charge.unit];
  // A live actor's (sandbox actors were refused above).
  const balance = (await payer).balance!;
  addDebit(op, balance, { accountId: actor.accountId, amount, reason: charge.unit, ref, now });
  return { kind: "credits", amount, unit: charge.unit };
}
