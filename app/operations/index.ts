/**
 * Every operation of the application layer, in the order the API reference lists them. Both
 * adapters are built from it, and the parity test walks it.
 *
 * @module
 */
import { PROJECT_OPERATIONS } from "./projects.ts";
import { SCHEDULE_OPERATIONS } from "./schedules.ts";

export const OPERATIONS = [
  ...PROJECT_OPERATIONS,
  ...SCHEDULE_OPERATIONS,
];
