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

/** A value as one CSV cell: arrays joined, a nested object left in a column as JSON. */
function cellOf(v: unknown): Cell {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map(arrayItem).join(ARRAY_JOIN);
  if (typeof v === "object") return JSON.stringify(v);
  return v as Cell;
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
 * The row mapper of fixed `columns`: a column `a.b` reads field `b` of the object in field `a`
 * (nested objects are flattened that way). With `other`, that column holds the fields the named
 * columns leave out, as JSON (empty when nothing is left).
 */
export function rowOf(
  columns: readonly string[],
  other?: string,
): (item: Record<string, unknown>) => Cell[] {
  const paths = columns.map((c) => c.split("."));
  const at = other === undefined ? -1 : columns.indexOf(other);
  const named = new Set(paths.filter((_, i) => i !== at).map((p) => p[0]));
  return (item) => {
    const cells: Cell[] = new Array(paths.length);
    for (let i = 0; i < paths.length; i++) {
      let v: unknown = item;
      for (const part of paths[i]) v = (v as Record<string, unknown> | null)?.[part];
      cells[i] = cellOf(v);
    }
    if (at >= 0) {
      let rest: Record<string, unknown> | null = null;
      for (const k in item) if (!named.has(k)) (rest ??= {})[k] = item[k];
      cells[at] = rest ? JSON.stringify(rest) : null;
    }
    return cells;
  };
}
