/**
 * Languages of text analysis: the Snowball stemmers `snowball-stemmers` ships,
 * named by their English name (`english`, `spanish`), with their ISO 639-1
 * code (what `_language: "en"` names) and the ISO 639-3 code of their stop
 * word list in `stopword` (absent when `stopword` has none, e.g. `tamil`).
 *
 * English stops the words of the SMART list (570 words, `stopwords-json`'s
 * `en`), the list Xapiand uses: `stopword`'s shorter English list keeps
 * `few`, `far` and `between`, so "these days are few and far between" would
 * match other documents than Xapiand's documentation shows.
 *
 * Stemmers and stop sets are built once per language and cached for the life
 * of the process: there are at most 24 languages, so the caches are bounded.
 *
 * Both libraries are CommonJS files of 0.9 MB and 0.2 MB, loaded with
 * `require` when a language is first needed: imported from ESM, Node lexes
 * them for their export names first, and every thread that loads the
 * analyzer (the analysis thread among them, at the start of a bulk load)
 * paid ~0.1 s for it, even for text without a language.
 */
import { createRequire } from 'node:module';
import type { Stemmer } from 'snowball-stemmers';

type StopwordLists = typeof import('stopword');
/** The stop word lists with their own package: English's SMART list. */
const OWN_LISTS: Readonly<Partial<Record<string, string>>> = { eng: 'stopwords-json/dist/en.json' };

const require = createRequire(import.meta.url);
let snowball: typeof import('snowball-stemmers') | undefined;
let stopwordLists: StopwordLists | undefined;

function snowballStemmers(): typeof import('snowball-stemmers') {
  return (snowball ??= require('snowball-stemmers') as typeof import('snowball-stemmers'));
}

interface LanguageInfo {
  readonly iso1: string | null;
  readonly iso3: keyof StopwordLists | null;
}

/** Snowball name → codes. `porter` is the original English stemmer. */
const LANGUAGES: Readonly<Record<string, LanguageInfo>> = {
  arabic: { iso1: 'ar', iso3: 'ara' },
  armenian: { iso1: 'hy', iso3: 'hye' },
  basque: { iso1: 'eu', iso3: 'eus' },
  catalan: { iso1: 'ca', iso3: 'cat' },
  czech: { iso1: 'cs', iso3: 'ces' },
  danish: { iso1: 'da', iso3: 'dan' },
  dutch: { iso1: 'nl', iso3: 'nld' },
  english: { iso1: 'en', iso3: 'eng' },
  finnish: { iso1: 'fi', iso3: 'fin' },
  french: { iso1: 'fr', iso3: 'fra' },
  german: { iso1: 'de', iso3: 'deu' },
  hungarian: { iso1: 'hu', iso3: 'hun' },
  irish: { iso1: 'ga', iso3: 'gle' },
  italian: { iso1: 'it', iso3: 'ita' },
  norwegian: { iso1: 'no', iso3: 'nob' },
  porter: { iso1: null, iso3: 'eng' },
  portuguese: { iso1: 'pt', iso3: 'por' },
  romanian: { iso1: 'ro', iso3: 'ron' },
  russian: { iso1: 'ru', iso3: 'rus' },
  slovene: { iso1: 'sl', iso3: 'slv' },
  spanish: { iso1: 'es', iso3: 'spa' },
  swedish: { iso1: 'sv', iso3: 'swe' },
  tamil: { iso1: 'ta', iso3: null },
  turkish: { iso1: 'tr', iso3: 'tur' },
};

const BY_ISO1 = new Map<string, string>();
for (const [name, info] of Object.entries(LANGUAGES)) if (info.iso1 !== null) BY_ISO1.set(info.iso1, name);

let available: ReadonlySet<string> | undefined;

/** The Snowball names the library has a stemmer for. */
function availableLanguages(): ReadonlySet<string> {
  return (available ??= new Set(snowballStemmers().algorithms()));
}

/** Snowball names of every language analysis supports. */
export function snowballLanguages(): string[] {
  return Object.keys(LANGUAGES).filter((name) => availableLanguages().has(name));
}

/**
 * The Snowball name for an English name or ISO 639-1 code (any case), or
 * `undefined` when the language has no stemmer (the schema answers 400).
 */
export function resolveLanguage(nameOrCode: string): string | undefined {
  const key = nameOrCode.toLowerCase();
  const name = Object.hasOwn(LANGUAGES, key) ? key : BY_ISO1.get(key);
  return name !== undefined && availableLanguages().has(name) ? name : undefined;
}

const stemmers = new Map<string, Stemmer>();
const stopSets = new Map<string, ReadonlySet<string>>();
const EMPTY_SET: ReadonlySet<string> = new Set();

/** The cached Snowball stemmer of `language` (a name `resolveLanguage` returned). */
export function stemmerFor(language: string): Stemmer {
  let stemmer = stemmers.get(language);
  if (stemmer === undefined) {
    stemmer = snowballStemmers().newStemmer(language);
    stemmers.set(language, stemmer);
  }
  return stemmer;
}

/**
 * The cached stop word set of `language`, lower-cased with apostrophes
 * normalised to `'` the way tokens are. Empty when there is no list.
 */
export function stopWordsFor(language: string): ReadonlySet<string> {
  let set = stopSets.get(language);
  if (set === undefined) {
    const iso3 = LANGUAGES[language]?.iso3 ?? null;
    const own = iso3 === null ? undefined : OWN_LISTS[iso3];
    let list: unknown;
    if (own !== undefined) list = require(own);
    else if (iso3 !== null) list = (stopwordLists ??= require('stopword') as StopwordLists)[iso3];
    set = Array.isArray(list) ? new Set((list as string[]).map((w) => w.toLowerCase().replaceAll('\u2019', "'"))) : EMPTY_SET;
    stopSets.set(language, set);
  }
  return set;
}
