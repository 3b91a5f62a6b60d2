import { TesseraError } from '@tessera/errors';
import { Analyzer, analyzeQueryTerm, analyzerFor, NO_POSITION, TOKEN_BYTES_MAX } from './analyzer.js';
import type { AnalyzerOptions, StemStrategy, StopStrategy } from './analyzer.js';
import { resolveLanguage, snowballLanguages, stopWordsFor } from './languages.js';
import { StemCache } from './stem-cache.js';

const english = (stemStrategy: StemStrategy, stopStrategy: StopStrategy = 'stop_none'): AnalyzerOptions =>
  ({ language: 'english', stemStrategy, stopStrategy });

/** Terms as compact strings: `term@pos`, `Zterm` (no position) or `Zterm@pos`. */
function terms(options: AnalyzerOptions, text: string): string[] {
  return new Analyzer(options).analyzeToArray(text)
    .map(({ term, position, z }) => `${z ? 'Z' : ''}${term}${position === NO_POSITION ? '' : `@${position}`}`);
}

describe('Analyzer', () => {
  it('without a language indexes lower-cased tokens with positions, whatever the strategies', () => {
    for (const stem of ['stem_none', 'stem_some', 'stem_all', 'stem_all_z'] as const) {
      expect(terms({ stemStrategy: stem, stopStrategy: 'stop_all' }, "The Cats' T-shirts"))
        .toEqual(['the@0', 'cats@1', 't@2', 'shirts@3']);
    }
  });

  it('stem_some: unstemmed token with position plus a Z stem without one', () => {
    expect(terms(english('stem_some'), 'Running cats ran'))
      .toEqual(['running@0', 'Zrun', 'cats@1', 'Zcat', 'ran@2', 'Zran']);
  });

  it('stem_some does not stem tokens starting with a digit', () => {
    expect(terms(english('stem_some'), '3d graphics')).toEqual(['3d@0', 'graphics@1', 'Zgraphic']);
  });

  it('stem_all indexes only plain stems, with positions', () => {
    expect(terms(english('stem_all'), 'Running cats 3ds')).toEqual(['run@0', 'cat@1', '3ds@2']);
  });

  it('stem_all_z indexes only Z stems, with positions', () => {
    expect(terms(english('stem_all_z'), 'Running cats')).toEqual(['Zrun@0', 'Zcat@1']);
  });

  it('stem_none indexes only tokens', () => {
    expect(terms(english('stem_none', 'stop_stemmed'), 'Running the cats')).toEqual(['running@0', 'the@1', 'cats@2']);
  });

  it('stop_stemmed keeps stop words but skips their stems (stem_some)', () => {
    expect(terms(english('stem_some', 'stop_stemmed'), 'the cats'))
      .toEqual(['the@0', 'cats@1', 'Zcat']);
  });

  it('stop_all drops stop words without using a position', () => {
    expect(terms(english('stem_some', 'stop_all'), 'the cats and the dogs'))
      .toEqual(['cats@0', 'Zcat', 'dogs@1', 'Zdog']);
    expect(terms(english('stem_all', 'stop_all'), 'the cats')).toEqual(['cat@0']);
  });

  it('stop_stemmed does not apply to stem_all (Xapian applies it only under stem_some)', () => {
    expect(terms(english('stem_all', 'stop_stemmed'), 'the cats')).toEqual(['the@0', 'cat@1']);
  });

  it('stems spanish and drops spanish stop words', () => {
    expect(terms({ language: 'spanish', stemStrategy: 'stem_some', stopStrategy: 'stop_all' }, 'Los niños y las canciones'))
      .toEqual(['niños@0', 'Zniñ', 'canciones@1', 'Zcancion']);
    expect(terms({ language: 'es', stemStrategy: 'stem_all', stopStrategy: 'stop_none' }, 'gatos corriendo'))
      .toEqual(['gat@0', 'corr@1']);
  });

  it('continues positions from firstPosition and returns the next one', () => {
    const analyzer = new Analyzer(english('stem_some'));
    const seen: number[] = [];
    const next = analyzer.analyze('one two', (_t, position) => { seen.push(position); }, 100);
    expect(seen).toEqual([100, NO_POSITION, 101, NO_POSITION]);
    expect(next).toBe(102);
  });

  it('skips tokens longer than TOKEN_BYTES_MAX bytes', () => {
    const ok = 'a'.repeat(TOKEN_BYTES_MAX);
    const long = 'b'.repeat(TOKEN_BYTES_MAX + 1);
    const wide = 'é'.repeat(Math.ceil((TOKEN_BYTES_MAX + 1) / 2)); // 2 bytes each
    expect(terms({ stemStrategy: 'stem_none', stopStrategy: 'stop_none' }, `${ok} ${long} ${wide} x`))
      .toEqual([`${ok}@0`, 'x@1']);
  });

  it('rejects unknown languages and strategies with 400s', () => {
    const attempt = (options: AnalyzerOptions): unknown => { try { new Analyzer(options); } catch (err) { return err; } return null; };
    const err = attempt({ language: 'klingon', stemStrategy: 'stem_some', stopStrategy: 'stop_stemmed' });
    expect(err).toBeInstanceOf(TesseraError);
    expect(err).toMatchObject({ code: 'invalid_language', status: 400, message: 'Unknown language: klingon' });
    expect(attempt({ stemStrategy: 'some' as StemStrategy, stopStrategy: 'stop_none' })).toMatchObject({ code: 'invalid_analysis_option', status: 400 });
    expect(() => analyzerFor({ language: 'xx', stemStrategy: 'stem_some', stopStrategy: 'stop_none' })).toThrow('Unknown language: xx');
  });

  it('analyzerFor shares one analyzer per resolved options', () => {
    expect(analyzerFor(english('stem_some', 'stop_all'))).toBe(analyzerFor({ language: 'EN', stemStrategy: 'stem_some', stopStrategy: 'stop_all' }));
    expect(analyzerFor(english('stem_some', 'stop_all'))).not.toBe(analyzerFor(english('stem_all', 'stop_all')));
  });
});

describe('query terms', () => {
  it('stem_some searches Z stems, except capitalised, positional, digit-led words', () => {
    const options = english('stem_some', 'stop_stemmed');
    expect(analyzeQueryTerm('running', options)).toEqual([{ term: 'run', z: true }]);
    expect(analyzeQueryTerm('Running', options)).toEqual([{ term: 'running', z: false }]);
    expect(analyzeQueryTerm('running', options, { positional: true })).toEqual([{ term: 'running', z: false }]);
    expect(analyzeQueryTerm('3ds', options)).toEqual([{ term: '3ds', z: false }]);
    expect(analyzeQueryTerm('dog-walkers', options)).toEqual([{ term: 'dog', z: true }, { term: 'walker', z: true }]);
    // Every single letter is an English (SMART) stop word: `t` is not searched.
    expect(analyzeQueryTerm('t-shirts', options)).toEqual([{ term: 'shirt', z: true }]);
  });

  it('meets what indexing produced, for every strategy', () => {
    for (const stem of ['stem_none', 'stem_some', 'stem_all', 'stem_all_z'] as const) {
      const options = english(stem);
      const indexed = new Set(new Analyzer(options).analyzeToArray('Connections generously').map((t) => `${t.z ? 'Z' : ''}${t.term}`));
      for (const word of ['connections', 'generously', 'CONNECTIONS']) {
        for (const { term, z } of analyzeQueryTerm(word, options)) expect(indexed.has(`${z ? 'Z' : ''}${term}`)).toBe(true);
      }
    }
  });

  it('drops stop words unless kept; kept stop words under stop_stemmed stay unstemmed', () => {
    expect(analyzeQueryTerm('the', english('stem_some', 'stop_stemmed'))).toEqual([]);
    expect(analyzeQueryTerm('the', english('stem_some', 'stop_stemmed'), { keepStopWords: true })).toEqual([{ term: 'the', z: false }]);
    expect(analyzeQueryTerm('the', english('stem_some', 'stop_none'))).toEqual([{ term: 'the', z: true }]);
    expect(analyzeQueryTerm('the', { stemStrategy: 'stem_some', stopStrategy: 'stop_all' })).toEqual([{ term: 'the', z: false }]);
  });

  it('stem_all and stem_all_z search stems with and without Z', () => {
    expect(analyzeQueryTerm('Cats', english('stem_all'))).toEqual([{ term: 'cat', z: false }]);
    expect(analyzeQueryTerm('Cats', english('stem_all_z'))).toEqual([{ term: 'cat', z: true }]);
    expect(analyzeQueryTerm('Cats', english('stem_none'))).toEqual([{ term: 'cats', z: false }]);
  });
});

describe('languages', () => {
  it('resolves English names and ISO 639-1 codes', () => {
    expect(resolveLanguage('English')).toBe('english');
    expect(resolveLanguage('es')).toBe('spanish');
    expect(resolveLanguage('de')).toBe('german');
    expect(resolveLanguage('porter')).toBe('porter');
    expect(resolveLanguage('toString')).toBeUndefined();
    expect(resolveLanguage('zz')).toBeUndefined();
    expect(snowballLanguages()).toContain('spanish');
  });

  it('has stop lists: SMART for English, stopword\'s for the others, none for tamil', () => {
    expect(stopWordsFor('english').has('the')).toBe(true);
    // English is the SMART list Xapiand uses (570 words, `few`, `far` and `between` among them).
    expect(stopWordsFor('english').size).toBe(570);
    for (const w of ['few', 'far', 'between', "he's", 'uucp']) expect(stopWordsFor('english').has(w)).toBe(true);
    expect(stopWordsFor('porter')).toBe(stopWordsFor('porter'));
    expect(stopWordsFor('porter').has('far')).toBe(true);
    expect(stopWordsFor('spanish').has('los')).toBe(true);
    expect(stopWordsFor('tamil').size).toBe(0);
    expect(stopWordsFor('english')).toBe(stopWordsFor('english'));
  });
});

describe('StemCache', () => {
  it('memoises stems in two bounded generations', () => {
    let calls = 0;
    const cache = new StemCache({ stem: (w) => { calls++; return w.slice(0, 3); } }, 2);
    expect(cache.stem('abcd')).toBe('abc');
    expect(cache.stem('abcd')).toBe('abc');
    expect(calls).toBe(1);
    cache.stem('bcde');
    cache.stem('cdef'); // young full: {abcd, bcde} becomes old
    expect(cache.size).toBeLessThanOrEqual(4);
    cache.stem('abcd'); // found in old, promoted
    expect(calls).toBe(3);
    for (const w of ['w1xx', 'w2xx', 'w3xx', 'w4xx', 'w5xx']) cache.stem(w);
    expect(cache.size).toBeLessThanOrEqual(4);
    const long = 'x'.repeat(100);
    cache.stem(long);
    cache.stem(long);
    expect(calls).toBe(10); // long tokens bypass the memo
  });
});
