/**
 * Rows to text for the exports, chunk by chunk: CSV (RFC 4180 through `csv-stringify`) and NDJSON.
 * Both take rows in batches and give one text chunk per batch, so an encoder holds one batch at
 * a time whatever the list's size.
 *
 * CSV cells: nested objects are flattened to `a.b` columns, arrays joined with `ARRAY_JOIN`, null
 * is an empty cell, booleans are `true`/`false`. A text cell that a spreadsheet would run as a
 * formula (it starts with `=`, `+`, `-`, `@`, a tab or a carriage return, or their full-width
 * forms) is prefixed with `'`; numbers are left as they are (`-3` is a number, not a formula).
 * Records end with CRLF; a cell holding a comma, a quote or any line break is quoted, with quotes
 * doubled.
 *
 * @module
 */
import { type Options, stringify } from "csv-stringify/sync";

/** How an array's values share one CSV cell (NDJSON keeps arrays as arrays). */
export const ARRAY_JOIN = " | ";

export type Cell = string | number | boolean | null;

const CSV_OPTIONS: Options = {
  record_delimiter: "windows",
  escape_formulas: true,
  // RFC 4180 quotes a cell holding CRLF; a lone CR or LF is quoted too.
  quoted_match: [/[\r\n]/],
  cast: { boolean: (value: boolean) => (value ? "true" : "false") },
};

/** `value`'s leaves as `path → cell`: nested objects as `a.b`, arrays joined. */
export function flatten(value: Record<string, unknown>, prefix = ""): Record<string, Cell> {
  const out: Record<string, Cell> = {};
  for (const [k, v] of Object.entries(value)) {
    const name = prefix ? `${prefix}.${k}` : k;
    if (Array.isArray(v)) out[name] = v.map(arrayItem).join(ARRAY_JOIN);
    else if (v !== null && typeof v === "object") {
      Object.assign(out, flatten(v as Record<string, unknown>, name));
    } else if (v === undefined) out[name] = null;
    else out[name] = v as Cell;
  }
  return out;
}

function arrayItem(v: unknown): string {
  return v !== null && typeof v === "object" ? JSON.stringify(v) : String(v ?? "");
}

/** CSV records (CRLF-terminated) of the given rows. */
export function csvRecords(rows: readonly (readonly Cell[])[]): string {
  return rows.length === 0 ? "" : stringify(rows as Cell[][], CSV_OPTIONS);
}

/**
 * A CSV file as chunks: the header row, then one chunk per non-empty batch. `row` maps an item to
 * its cells in the header's order.
 */
export async function* csvChunks<T>(
  header: readonly string[],
  row: (item: T) => Cell[],
  batches: AsyncIterable<T[]>,
): AsyncGenerator<string> {
  yield csvRecords([header]);
  for await (const batch of batches) {
    if (batch.length > 0) yield csvRecords(batch.map(row));
  }
}

/** An NDJSON file as chunks: one JSON value per line, one chunk per non-empty batch. */
export async function* ndjsonChunks<T>(batches: AsyncIterable<T[]>): AsyncGenerator<string> {
  for await (const batch of batches) {
    if (batch.length > 0) yield batch.map((item) => JSON.stringify(item)).join("\n") + "\n";
  }
}

/**
 * The row mapper of fixed `columns` (flattened names). With `other`, that column holds the
 * fields the named columns leave out, as JSON (empty when nothing is left).
 */
export function rowOf(
  columns: readonly string[],
  other?: string,
): (item: Record<string, unknown>) => Cell[] {
  const named = new Set(columns.map((c) => c.split(".")[0]));
  const at = other === undefined ? -1 : columns.indexOf(other);
  return (item) => {
    const flat = flatten(item);
    const cells: Cell[] = columns.map((c) => flat[c] ?? null);
    if (at >= 0) {
      const rest = Object.entries(item).filter(([k]) => !named.has(k));
      cells[at] = rest.length ? JSON.stringify(Object.fromEntries(rest)) : null;
    }
    return cells;
  };
}
