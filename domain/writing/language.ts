/**
 * Which language a text is written in, from its script and, for Latin-script text, from the
 * share of each language's most frequent function words. Small and deterministic on purpose: QA
 * only needs to tell "this English draft is not the German article the project asked for", not
 * to rank close dialects, so it answers `null` rather than guess when the evidence is thin.
 */

import { primary } from "./readability.ts";

/**
 * The 40 or so most frequent words of each Latin-script language we profile. Frequent function
 * words make up a third to a half of running text in these languages, and the lists barely
 * overlap, so their shares separate the languages on a few hundred words.
 */
const PROFILES: Record<string, string> = {
  en: "the of and to a in is it you that he was for on are with as his they be at one have this " +
    "from or had by but what some we can out other were all there when your how their if will " +
    "each which do them these so than then its into only more also not",
  de: "der die und in den von zu das mit sich des auf für ist im dem nicht ein eine als auch es " +
    "an werden aus er hat dass sie nach wird bei einer um am sind noch wie einem über einen so " +
    "zum war haben nur oder aber vor zur bis mehr durch man sehr ihr ihre",
  fr: "de la le et les des en un du une que est pour qui dans par plus pas au sur ne se ce il " +
    "sont avec son aux ou cette comme mais été elle nous vous leur ses peut tout très sans",
  es: "de la que el en y los del se las por un para con no una su al es lo como más pero sus le " +
    "ya o este sí porque esta entre cuando muy sin sobre también me hasta hay donde desde todo",
  it: "di e il la che in a per un è del non sono le con i si da una al della dei gli come anche " +
    "più nel ma alla delle questo ha lo nella se suo sua tra cui molto essere",
  nl: "de en van het een in is dat op te voor met zijn niet aan er die ook als bij of om maar " +
    "dan wordt nog wel door naar kan uit over deze hij tot je worden meer veel geen",
  pt: "de a o que e do da em um para é com não uma os no se na por mais as dos como mas foi ao " +
    "ele das tem à seu sua ou ser quando muito há nos já está também pelo pela isso",
  sv: "och i att det som en på är av för med till den har de inte om ett han men var jag sig " +
    "från vi så kan man när år sin under också efter eller nu",
  da: "og i at det er en til på af med for ikke den der som de har et var sig han men om jeg " +
    "kan fra så skal vil også eller efter når hvor",
  no: "og i det er som på en til av for med at den har ikke de om et var han men jeg kan fra " +
    "så skal vil også eller etter når hvor seg",
  pl: "i w nie na się z do to że jest o jak po co tak za od ale przez jego już tylko czy dla " +
    "są może być jej było tego także lub oraz",
  tr: "ve bir bu da de için ile çok ne daha gibi olarak sonra kadar ama en her şey olan var " +
    "değil mi ya veya ancak",
};

const PROFILE_SETS: Record<string, Set<string>> = Object.fromEntries(
  Object.entries(PROFILES).map(([k, v]) => [k, new Set(v.split(/\s+/))]),
);

/** Norwegian Bokmål and Nynorsk read as `no`; their profile is the same. */
const ALIASES: Record<string, string> = { nb: "no", nn: "no" };

type Script =
  | "latin"
  | "cyrillic"
  | "greek"
  | "arabic"
  | "hebrew"
  | "kana"
  | "han"
  | "hangul"
  | "thai"
  | "devanagari";

const SCRIPTS: [Script, RegExp][] = [
  ["latin", /\p{Script=Latin}/u],
  ["cyrillic", /\p{Script=Cyrillic}/u],
  ["greek", /\p{Script=Greek}/u],
  ["arabic", /\p{Script=Arabic}/u],
  ["hebrew", /\p{Script=Hebrew}/u],
  ["kana", /[\p{Script=Hiragana}\p{Script=Katakana}]/u],
  ["han", /\p{Script=Han}/u],
  ["hangul", /\p{Script=Hangul}/u],
  ["thai", /\p{Script=Thai}/u],
  ["devanagari", /\p{Script=Devanagari}/u],
];

/** The script each language we recognise by script alone is written in. */
const SCRIPT_OF: Record<string, Script> = {
  ja: "kana", // Japanese mixes kana with Han; kana is what sets it apart from Chinese.
  zh: "han",
  ko: "hangul",
  ru: "cyrillic",
  uk: "cyrillic",
  bg: "cyrillic",
  sr: "cyrillic",
  el: "greek",
  ar: "arabic",
  fa: "arabic",
  he: "hebrew",
  th: "thai",
  hi: "devanagari",
};

export interface LanguageGuess {
  /** The detected primary language subtag, or null when the text gives too little evidence. */
  language: string | null;
  /** The dominant script of the letters. */
  script: Script | null;
  /** For Latin text: the best profile's share of words, e.g. 0.31; for other scripts: its share of letters. */
  share: number;
  /** Letters (or words for Latin text) the guess rests on. */
  sample: number;
}

/** Words needed before a Latin-script guess is made; below this the answer is null. */
const MIN_WORDS = 40;
/** Share of profile words the winning language needs (running prose is 0.25–0.5). */
const MIN_SHARE = 0.12;

/** Guesses the language of `text`. Pure; reads at most the first 12,000 characters. */
export function detectLanguage(text: string): LanguageGuess {
  const sample = text.slice(0, 12_000);
  const counts = new Map<Script, number>();
  let letters = 0;
  let ascii = 0;
  for (const ch of sample) {
    const code = ch.charCodeAt(0);
    if (code < 128) {
      // The common case, without a regex: ASCII letters are Latin, the rest is not a letter.
      if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122)) {
        letters++;
        ascii++;
      }
      continue;
    }
    if (!/\p{L}/u.test(ch)) continue;
    letters++;
    for (const [name, re] of SCRIPTS) {
      if (re.test(ch)) {
        counts.set(name, (counts.get(name) ?? 0) + 1);
        break;
      }
    }
  }
  if (ascii) counts.set("latin", (counts.get("latin") ?? 0) + ascii);
  if (!letters) return { language: null, script: null, share: 0, sample: 0 };
  // Any real share of kana means Japanese, even though Han characters usually outnumber it.
  const kana = counts.get("kana") ?? 0;
  let script: Script = "latin";
  let best = -1;
  for (const [name, n] of counts) if (n > best) [script, best] = [name, n];
  if (kana / letters >= 0.1) script = "kana";
  const scriptShare = (counts.get(script) ?? 0) / letters;
  if (script !== "latin") {
    const byScript: Partial<Record<Script, string>> = {
      kana: "ja",
      han: "zh",
      hangul: "ko",
      cyrillic: "ru",
      greek: "el",
      arabic: "ar",
      hebrew: "he",
      thai: "th",
      devanagari: "hi",
    };
    const share = script === "kana" ? (kana + (counts.get("han") ?? 0)) / letters : scriptShare;
    return { language: byScript[script] ?? null, script, share, sample: letters };
  }
  const words = sample.toLowerCase().match(/\p{L}+(?:['’]\p{L}+)?/gu) ?? [];
  if (words.length < MIN_WORDS) return { language: null, script, share: 0, sample: words.length };
  let lang: string | null = null;
  let top = 0;
  for (const [code, set] of Object.entries(PROFILE_SETS)) {
    let hits = 0;
    for (const w of words) if (set.has(w)) hits++;
    const share = hits / words.length;
    if (share > top) [lang, top] = [code, share];
  }
  return {
    language: top >= MIN_SHARE ? lang : null,
    script,
    share: Math.round(top * 1000) / 1000,
    sample: words.length,
  };
}

export type LanguageVerdict =
  | { kind: "match"; detected: string }
  | { kind: "mismatch"; detected: string }
  | { kind: "unknown"; reason: string };

/**
 * Compares a text with the project's language. `mismatch` only when the text is clearly in
 * another language (or another script); close relatives we cannot tell apart (da/no/sv) and
 * languages we have no profile for come back `unknown` unless the script alone decides.
 */
export function compareLanguage(text: string, expected: string): LanguageVerdict {
  const want = ALIASES[primary(expected)] ?? primary(expected);
  const guess = detectLanguage(text);
  const wantScript = SCRIPT_OF[want] ?? (PROFILES[want] ? "latin" : null);
  if (!guess.script) return { kind: "unknown", reason: "the text has no letters" };
  if (wantScript && wantScript !== guess.script) {
    // Japanese text without kana is not Japanese; Chinese text with kana is not Chinese.
    return { kind: "mismatch", detected: guess.language ?? guess.script };
  }
  if (!guess.language) {
    return { kind: "unknown", reason: `too little ${guess.script} text to tell the language` };
  }
  if (guess.language === want) return { kind: "match", detected: guess.language };
  const scandinavian = ["da", "no", "sv"];
  if (scandinavian.includes(want) && scandinavian.includes(guess.language)) {
    return { kind: "match", detected: guess.language };
  }
  if (wantScript && wantScript !== "latin") {
    // Same script, another language of it (ru vs uk): the script is all we can vouch for.
    return { kind: "match", detected: guess.language };
  }
  // A profiled language we want, or a clear reading as another language: the text is not ours.
  if (PROFILES[want] || guess.share >= 0.2) return { kind: "mismatch", detected: guess.language };
  return {
    kind: "unknown",
    reason: `no word profile for "${want}"; the text reads weakly as ${guess.language}`,
  };
}
