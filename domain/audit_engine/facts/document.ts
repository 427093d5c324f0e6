/**
 * Document facts: what the dispatcher (extract.ts) itself records about the whole page, its
 * size, doctype and mode, element count and depth, and the visible text's fingerprint. They are
 * the first part of every page's facts; the families (FACT_COLLECTORS) add the rest.
 *
 * @module
 */
import type { DocumentMode } from "../doctype.ts";

/** What the dispatcher records of the document as a whole. */
export interface DocumentFacts {
  bytes: number;
  /** A doctype appears anywhere in the document. */
  hasDoctype: boolean;
  /**
   * The document mode a browser renders the page in (doctype.ts): decided by the first doctype if
   * it comes before any element or text, else quirks.
   */
  documentMode: DocumentMode;
  /** Why the mode is not no-quirks (the standard's rule that decided it), else null. */
  documentModeReason: string | null;
  /** The first doctype as written (without `<!` and `>`, at most 200 characters), or null. */
  doctype: string | null;
  elementCount: number;
  maxDepth: number;
  /** Visible words, all of them (CJK characters count one each). */
  wordCount: number;
  /** 52 bits of a 64-bit hash of the normalised visible words (see text_fingerprint.ts). */
  textHash: number;
  /** MinHash signature of the visible text's word 3-shingles (near-duplicates). */
  textSig: Uint16Array;
}

const EMPTY_SIG = new Uint16Array(0);

/** The document facts before the page is read (the text's are set once it has been). */
export function initDocumentFacts(): DocumentFacts {
  return {
    bytes: 0,
    hasDoctype: false,
    documentMode: "quirks",
    documentModeReason: null,
    doctype: null,
    elementCount: 0,
    maxDepth: 0,
    wordCount: 0,
    textHash: 0,
    textSig: EMPTY_SIG,
  };
}
