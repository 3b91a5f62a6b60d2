import fc from 'fast-check';
import JSON5 from 'json5';
import { stripJsonComments } from './json-strip.js';

/** What parseSyntax does with a text JSON.parse refuses. */
function viaStrip(text: string): unknown {
  const stripped = stripJsonComments(text);
  if (stripped === null) throw new Error('not stripped');
  return JSON.parse(stripped);
}

describe('stripJsonComments', () => {
  it.each([
    ['// c\n{"a": 1}', { a: 1 }],
    ['{"a": 1, /* x */ "b": [1, 2, ], } // end', { a: 1, b: [1, 2] }],
    ['[1, // one\n 2 /* two */ , /* ] */\n]', [1, 2]],
    ['{"s": "// not a comment, ]", "t": "/* nor */", "q": "a\\"b,]"}', null],
    ['{"a": [ , ]}', null],
    ['[1, , ]', null],
    ['{"a": , }', null],
    [', ', null],
    ["{'a': 1, }", null],
    ['{"a": 1 /* open', null],
    ['{"a": 1 / 2}', null],
  ])('%s', (text, expected) => {
    if (expected === null) {
      const stripped = stripJsonComments(text);
      if (stripped !== null) expect(() => JSON.parse(stripped)).toThrow();
    } else {
      expect(viaStrip(text)).toEqual(expected);
      expect(viaStrip(text)).toEqual(JSON5.parse(text));
    }
  });
  it('leaves a text without comments or trailing commas alone', () => {
    expect(stripJsonComments('{"a": [1, 2], "b": "x"}')).toBeNull();
  });

  // Any JSON value, printed with comments and trailing commas between its tokens, parses as JSON5 parses it.
  it('agrees with JSON5 on JSON decorated with comments and trailing commas', () => {
    const gap = fc.constantFrom('', ' ', '\n', '/* c */', '// c\n', ' /**/ ', '\t//,]}\n');
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 4 }), fc.infiniteStream(gap), fc.infiniteStream(fc.boolean()), (value, gaps, commas) => {
      const print = (v: unknown): string => {
        const g = () => gaps.next().value;
        if (Array.isArray(v)) {
          const items = v.map((x) => `${g()}${print(x)}${g()}`);
          return `[${items.join(',')}${items.length > 0 && commas.next().value ? `,${g()}` : ''}]`;
        }
        if (v !== null && typeof v === 'object') {
          const items = Object.entries(v).map(([k, x]) => `${g()}${JSON.stringify(k)}${g()}:${g()}${print(x)}${g()}`);
          return `{${items.join(',')}${items.length > 0 && commas.next().value ? `,${g()}` : ''}}`;
        }
        return JSON.stringify(v);
      };
      const text = `${gaps.next().value}${print(value)}${gaps.next().value}`;
      const stripped = stripJsonComments(text);
      const parsed = stripped === null ? JSON.parse(text) : JSON.parse(stripped);
      expect(parsed).toEqual(JSON5.parse(text));
    }), { numRuns: 300 });
  });
});
