/**
 * Rendering: a pool of headless Chromium processes, a sample of pages rendered per audit, and the
 * checks that read the rendered page and its lab metrics. The public face of the capability.
 *
 * @example
 * ```ts
 * import { templateKey } from "./mod.ts";
 * const key = templateKey("https://example.com/blog/2024/post-1");
 * ```
 *
 * @module
 */
export { evaluateRenderedPage, RENDER_CHECKS, THRESHOLDS } from "./checks.ts";
export { RenderFailedError } from "./failure.ts";
export type { LabMetrics, RenderResult } from "./renderer.ts";
export { pickRenderSample, type SampleCandidate, templateKey } from "./sample.ts";
export { MAX_QUEUED_PRINTS, type PageRenderer, RenderService } from "./service.ts";
export type { PrintOptions } from "./print.ts";
