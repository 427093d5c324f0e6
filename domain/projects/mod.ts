/**
 * Projects: the sites an account works on, and who may see them. The public face of the
 * capability; the persisted shapes are in `types.ts`.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/mod.ts";
 * declare const deps: Deps, accountId: string;
 * import { getProject } from "./mod.ts";
 * const { entry, subscription } = await getProject(deps, accountId, "prj_123", "live");
 * ```
 *
 * @module
 */
export { createProject, getProject, listProjects, projectVisibleTo } from "./projects.ts";
