/**
 * The one wording of a validation failure: "field.path: what is wrong" for the first failed check,
 * so the caller knows which field. It takes the issues array (zod's or any standard-schema one), so
 * this leaf imports nothing.
 *
 * @module
 */

/** The part of a validation issue the wording reads. */
export type ZodIssueLike = { readonly path: readonly PropertyKey[]; readonly message: string };

/**
 * "field.path: message" for the first issue; `where` names the input when the path is empty (the
 * whole body, the query, the arguments), and `empty` is the text when there is no issue at all.
 *
 * @example
 * ```ts
 * import { describeIssue } from "./zod_issue.ts";
 *
 * describeIssue([{ path: ["url"], message: "Invalid URL" }], "body"); // "url: Invalid URL"
 * describeIssue([{ path: [], message: "Required" }], "query"); // "query: Required"
 * ```
 */
export function describeIssue(
  issues: readonly ZodIssueLike[],
  where: string,
  empty = "Invalid request",
): string {
  const issue = issues[0];
  if (!issue) return empty;
  const path = issue.path.map(String).join(".");
  return `${path || where}: ${issue.message}`;
}
