/**
 * Reading-ease formulas per language and the per-language sentence-length limits.
 *
 * Flesch-family formulas exist for a handful of languages only; for the rest QA skips the check
 * and says so rather than applying the English formula to text it was never fitted on. Syllables
 * are estimated by counting vowel groups (with the usual silent-e rules for English), so scores
 * are approximate but stable: the same text always gets the same number.
 */

/** `score = base − asl × ASL − asw × ASW` (ASL words per sentence, ASW syllables per word). */
interface FleschVariant {
  name: string;
  base: number;
  asl: number;
  asw: number;
  /** Added to the 60/50 traffic-light thresholds (Russian texts score ~10 lower). */
  shift: number;
  vowels: RegExp;
}

const FLESCH: Record<string, FleschVariant> = {
  en: {
    name: "Flesch reading ease",
    base: 206.835,
    asl: 1.015,
    asw: 84.6,
    shift: 0,
    vowels: /[aeiouy]+/g,
  },
  de: {
    name: "Flesch (Amstad)",
    base: 180,
    asl: 1,
    asw: 58.5,
    shift: 0,
    vowels: /[aeiouyäöü]+/g,
  },
  es: {
    name: "Fernández Huerta",
    base: 206.84,
    asl: 1.02,
    asw: 60,
    shift: 0,
    vowels: /[aeiouáéíóúü]+/g,
  },
  fr: {
    name: "Kandel–Moles",
    base: 207,
    asl: 1.015,
    asw: 73.6,
    shift: 0,
    vowels: /[aeiouyéèêëàâîïôûùüœæ]+/g,
  },
  it: {
    name: "Franchina–Vacca",
    base: 217,
    asl: 1.3,
    asw: 60,
    shift: 0,
    vowels: /[aeiouàèéìíòóù]+/g,
  },
  nl: {
    name: "Flesch–Douma",
    base: 206.84,
    asl: 0.93,
    asw: 77,
    shift: 0,
    vowels: /[aeiouyëïéèáóúij]+/g,
  },
  pt: {
    name: "Flesch (Martins et al.)",
    base: 248.835,
    asl: 1.015,
    asw: 84.6,
    shift: 0,
    vowels: /[aeiouáâãàéêíóôõú]+/g,
  },
  ru: {
    name: "Flesch (Oborneva)",
    base: 206.835,
    asl: 1.3,
    asw: 60.1,
    shift: -10,
    vowels: /[аеёиоуыэюя]/g,
  },
};

/** Estimated English syllables: vowel groups minus silent endings, at least one. */
function englishSyllables(word: string): number {
  let w = word.toLowerCase().replace(/[^a-z]/g, "");
  if (w.length <= 3) return 1;
  w = w.replace(/(?:[^laeiouy]es|[^laeiouy]ed|[^laeiouy]e)$/, "").replace(/^y/, "");
  const groups = w.match(/[aeiouy]{1,2}/g);
  return Math.max(1, groups ? groups.length : 1);
}

/** Estimated syllables of one word in `language`; vowel groups for non-English languages. */
export function syllables(word: string, language: string): number {
  const lang = primary(language);
  if (lang === "en") return englishSyllables(word);
  const v = FLESCH[lang];
  if (!v) return 1;
  let w = word.toLowerCase();
  if (lang === "fr" && w.length > 3) w = w.replace(/(?:es|e|ent)$/, "");
  const m = w.match(v.vowels);
  return Math.max(1, m ? m.length : 1);
}

export interface ReadingEase {
  formula: string;
  score: number;
  /** Score at or above which the text is "easy enough" (60, shifted per language). */
  good: number;
  /** Score under which it is "hard" (50, shifted per language). */
  poor: number;
}

/**
 * Reading ease of a text already split into sentences and words, or null when no published
 * formula exists for the language (the caller reports the check as skipped).
 */
export function readingEase(
  sentenceCount: number,
  wordList: string[],
  language: string,
): ReadingEase | null {
  const v = FLESCH[primary(language)];
  if (!v || sentenceCount === 0 || wordList.length === 0) return null;
  let syl = 0;
  for (const w of wordList) syl += syllables(w, language);
  const asl = wordList.length / sentenceCount;
  const asw = syl / wordList.length;
  const score = Math.round((v.base - v.asl * asl - v.asw * asw) * 10) / 10;
  return { formula: v.name, score, good: 60 + v.shift, poor: 50 + v.shift };
}

/** Whether a reading-ease formula is known for the language. */
export function hasReadingEase(language: string): boolean {
  return primary(language) in FLESCH;
}

/** Words per sentence above which a sentence counts as long (Yoast's per-language limits). */
export function longSentenceLimit(language: string): number {
  const lang = primary(language);
  if (["es", "it", "pt", "ca", "fa"].includes(lang)) return 25;
  if (["he", "ru", "tr"].includes(lang)) return 15;
  return 20;
}

/** `en-GB` → `en`. */
export function primary(language: string): string {
  return language.toLowerCase().split(/[-_]/)[0];
}
