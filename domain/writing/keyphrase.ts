/**
 * Keyphrase matching the way SEO plugins count it: on the keyphrase's content words (function
 * words dropped), in any order within one unit (sentence, heading, title), tolerating simple
 * inflections ("shoe" matches "shoes"). Languages without a function-word list keep every word.
 */

import { lowerWords } from "./markdown_text.ts";
import { primary } from "./readability.ts";

const FUNCTION_WORDS: Record<string, string> = {
  en:
    "a an the and or but of to in on at for with by from as is are be was were it its this that " +
    "these those how what why when where which who do does can i you your my our we us near vs " +
    "versus into about than then so if not no",
  de:
    "der die das den dem des ein eine einen einem einer und oder aber von zu im in am an auf für " +
    "mit bei aus als ist sind wie was warum wann wo welche wer ich du sie wir es nicht vs",
  fr:
    "le la les l un une des du de d et ou mais à au aux en dans sur pour par avec comme est sont " +
    "ce cette ces comment quoi pourquoi quand où qui que je tu vous nous il elle pas vs",
  es:
    "el la los las un una unos unas y o pero de del a al en sobre para por con como es son este " +
    "esta estos cómo qué por qué cuándo dónde quién yo tú usted nosotros no vs",
  it: "il lo la i gli le un uno una e o ma di del della a al in su per con come è sono questo " +
    "questa come cosa perché quando dove chi io tu noi non vs",
  nl: "de het een en of maar van te in op aan voor met bij uit als is zijn dit dat deze hoe wat " +
    "waarom wanneer waar wie ik je jij we wij niet vs",
  pt: "o a os as um uma uns umas e ou mas de do da dos das em no na para por com como é são este " +
    "esta como que por que quando onde quem eu você nós não vs",
};

const FUNCTION_SETS: Record<string, Set<string>> = Object.fromEntries(
  Object.entries(FUNCTION_WORDS).map(([k, v]) => [k, new Set(v.split(/\s+/))]),
);

/** Content words of a keyphrase; all its words when it has no content word or no list exists. */
export function contentWords(keyphrase: string, language: string): string[] {
  const all = lowerWords(keyphrase);
  const stop = FUNCTION_SETS[primary(language)];
  if (!stop) return all;
  const content = all.filter((w) => !stop.has(w));
  return content.length ? content : all;
}

/** True when `word` is an inflection of keyword word `kw` (same stem, short ending difference). */
export function sameWord(word: string, kw: string): boolean {
  if (word === kw) return true;
  const [short, long] = word.length < kw.length ? [word, kw] : [kw, word];
  return short.length >= 4 && long.length - short.length <= 2 && long.startsWith(short);
}

/**
 * Looser than {@link sameWord}, for topic vocabulary: words sharing a stem of 4+ letters that
 * covers all but the last two letters of the shorter one ("runner" ~ "running", "shoe" ~
 * "shoes"); words under 4 letters only take a plural ending ("tax" ~ "taxes").
 */
export function sameStem(a: string, b: string): boolean {
  if (a === b) return true;
  const [s, l] = a.length <= b.length ? [a, b] : [b, a];
  if (s.length < 4) return l === `${s}s` || l === `${s}es`;
  let p = 0;
  while (p < s.length && s[p] === l[p]) p++;
  return p >= Math.max(4, s.length - 2);
}

/** How many of the keyword's content words occur in `unitWords` (lower-cased). */
export function matchedCount(unitWords: string[], kwWords: string[]): number {
  let n = 0;
  for (const kw of kwWords) if (unitWords.some((w) => sameWord(w, kw))) n++;
  return n;
}

/** Full match: every content word present. */
export function fullMatch(unitWords: string[], kwWords: string[]): boolean {
  return kwWords.length > 0 && matchedCount(unitWords, kwWords) === kwWords.length;
}

/**
 * Keyphrase occurrences in one unit: the fewest times any content word occurs (so "shoes …
 * running shoes … running" counts 2 for "running shoes").
 */
export function occurrences(unitWords: string[], kwWords: string[]): number {
  if (!kwWords.length) return 0;
  let min = Infinity;
  for (const kw of kwWords) {
    let c = 0;
    for (const w of unitWords) if (sameWord(w, kw)) c++;
    if (c < min) min = c;
    if (min === 0) return 0;
  }
  return min;
}

/** Normalised text for exact-phrase comparisons (case and spacing folded). */
export function normalisePhrase(s: string): string {
  return lowerWords(s).join(" ");
}
