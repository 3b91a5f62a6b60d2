/**
 * YAML request bodies (API.md §2.2): YAML 1.2 core schema, exactly one
 * document. yaml's composer and toJS recurse once per nesting level, so the
 * lexer and CST parser (both iterative) are driven here token by token and
 * the parse stops as soon as the parser's stack of open nodes is deeper than
 * the limit allows — a 100,000-deep `[[[[…` or `- - - …` is refused after a
 * few hundred tokens. Aliases are bounded by yaml's maxAliasCount, and the
 * value walk bounds what they expand to (shared subtrees, cycles).
 *
 * The collection being lexed is watched too: a sequence with more items than
 * `arrayItemsMax`, or a mapping with more entries than `fieldsMax`, stops
 * the lexer there (`values: [0, 1, …]` with 1,000,000 items used to run to
 * the token bound: 1-2.6 s and ~100 MB of heap; now ~10,000 items, a few ms).
 *
 * Two costs of yaml's composer are quadratic or nearly: its duplicate-key
 * check compares each key with every earlier key of its mapping (10,050 keys:
 * 3-6 s), so it is off and `checkUniqueKeys` does it with a Set; and a
 * double-quoted scalar is resolved a character at a time into a chain of
 * string pieces (an 8 MB one: 4-6 s and hundreds of MB of garbage), so a
 * scalar longer than yamlScalarCharsMax source characters stops the lexer.
 */
import {
  Composer, isMap, isScalar, isSeq, Lexer, LineCounter, Parser, type CST, type Document, type DocumentOptions, type ParseOptions, type SchemaOptions,
} from 'yaml';
import { TesseraError } from '@tessera/errors';
import { bodyMalformed, bodyTooDeep, scalarTooLong, tooManyArrayItems, tooManyFields, tooManyValues } from './errors.js';
import type { DecodeLimits } from './types.js';
import { arrayItemsMaxOf, yamlScalarCharsMaxOf, yamlValuesMaxOf } from './limits.js';
import { checkDecodedValue } from './value-check.js';

const WHAT = 'YAML';

// The parser's stack holds the document and may hold an unfinished scalar or
// key besides the open collections; this slack keeps a document exactly
// depthMax deep acceptable. The exact depth is checked on the value.
const PARSER_STACK_SLACK = 8;

// Aliases let a few bytes name a large subtree. Past this many values per
// body byte the expansion is refused whatever yaml's alias count says.
const VALUES_PER_BODY_BYTE_MAX = 4;
const VALUES_MIN = 4096;

// The lexer and CST parser hold about 300 bytes of heap per token until the
// document is composed (1,000,000 flow items: 20 s and GBs); a body's values
// take at least one token each, at most ~4 in block style: lexing stops past
// this many tokens per value allowed. 200,000 tokens by default, ~60 MB.
const TOKENS_PER_VALUE_MAX = 2;

const COMPOSE_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.2',
  schema: 'core',
  merge: false,
  // Checked by checkUniqueKeys in linear time: yaml's check is O(keys²) per mapping.
  uniqueKeys: false,
  strict: true,
  intAsBigInt: false,
  // `!!set`, `!!omap`, `!!timestamp`, `!!binary` would build Set, Map, Date
  // and Buffer values that JSON has no form for: keep them as plain YAML
  // (a tag yaml does not resolve is a warning, not an error).
  resolveKnownTags: false,
  // Warnings (such as a collection used as a key) would go to process.emitWarning
  // on every request that provokes them; they are not errors of the body.
  logLevel: 'error',
};

export function parseYamlText(text: string, limits: DecodeLimits): unknown {
  try {
    return parseYaml(text, limits);
  } catch (err) {
    if (err instanceof TesseraError) throw err;
    // Last resort: a RangeError from recursion the checks above did not
    // foresee, or anything else yaml throws, is the body's fault.
    throw bodyMalformed(WHAT, err instanceof Error ? err.message : String(err), err);
  }
}

function parseYaml(text: string, limits: DecodeLimits): unknown {
  const lineCounter = new LineCounter();
  // The parser reports the start of each line after a newline; without the first, lines were counted from 0.
  lineCounter.addNewLine(0);
  const parser = new Parser(lineCounter.addNewLine);
  const stackMax = limits.depthMax + PARSER_STACK_SLACK;
  const tokens: CST.Token[] = [];
  const valuesMax = yamlValuesMaxOf(limits);
  const lexemesMax = valuesMax * TOKENS_PER_VALUE_MAX + VALUES_MIN;
  const scalarCharsMax = yamlScalarCharsMaxOf(limits);
  const arrayItemsMax = arrayItemsMaxOf(limits);
  let lexemes = 0;
  for (const lexeme of new Lexer().lex(text)) {
    if (++lexemes > lexemesMax) throw tooManyValues(WHAT, valuesMax);
    // A scalar, quoted or plain or block, is one lexeme: its whole source.
    if (lexeme.length > scalarCharsMax) throw scalarTooLong(WHAT, scalarCharsMax);
    for (const token of parser.next(lexeme)) tokens.push(token);
    const stack = parser.stack;
    if (stack.length > stackMax) throw bodyTooDeep(limits.depthMax);
    checkOpenCollection(stack[stack.length - 1], arrayItemsMax, limits.fieldsMax);
  }
  for (const token of parser.end()) tokens.push(token);

  const composer = new Composer(COMPOSE_OPTIONS);
  let doc: Document.Parsed | undefined;
  let count = 0;
  for (const composed of composer.compose(tokens, true, text.length)) {
    // Stop at the second document rather than compose a stream of thousands.
    if (++count > 1) throw bodyMalformed(WHAT, 'expected one document, found more');
    doc = composed;
  }
  // compose(…, forceDoc = true) yields a document even for an empty stream.
  if (doc === undefined) throw bodyMalformed(WHAT, 'expected one document, found none');
  const error = doc.errors[0];
  if (error !== undefined) {
    const { line, col } = lineCounter.linePos(error.pos[0]);
    throw bodyMalformed(WHAT, `${error.message} at line ${line}, column ${col}`, error);
  }
  checkUniqueKeys(doc, lineCounter);
  const value: unknown = doc.toJS({ maxAliasCount: limits.yamlAliasesMax, mapAsMap: false });
  checkDecodedValue(value, limits, Math.min(valuesMax, text.length * VALUES_PER_BODY_BYTE_MAX + VALUES_MIN), WHAT);
  return value;
}

/**
 * Refuses the collection the parser is filling once it holds more items than
 * a decoded value could: the exact checks run on the value (value-check.ts),
 * this one only stops the lexer early. A flow collection's items are its
 * entries (a comma opens the next), a block collection's its `- ` or `key:` lines.
 */
function checkOpenCollection(top: CST.Token | undefined, arrayItemsMax: number, fieldsMax: number): void {
  if (top === undefined) return;
  if (top.type === 'block-seq') {
    if (top.items.length > arrayItemsMax + 1) throw tooManyArrayItems(arrayItemsMax);
  } else if (top.type === 'block-map') {
    if (top.items.length > fieldsMax + 1) throw tooManyFields(fieldsMax);
  } else if (top.type === 'flow-collection') {
    const n = top.items.length;
    if (top.start.source === '[') {
      if (n > arrayItemsMax + 1) throw tooManyArrayItems(arrayItemsMax);
    } else if (n > fieldsMax + 1) {
      throw tooManyFields(fieldsMax);
    }
  }
}

/**
 * yaml's `uniqueKeys: true` rule (scalar keys equal by value, other keys by
 * identity) with one Set per mapping. Iterative over the node tree, which
 * the parser-stack check has bounded in depth; aliases are not followed
 * (their target is checked where it is defined).
 */
function checkUniqueKeys(doc: Document.Parsed, lineCounter: LineCounter): void {
  const pending: unknown[] = [doc.contents];
  while (pending.length > 0) {
    const node = pending.pop();
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        if (seen.has(key)) {
          const at = (isScalar(pair.key) ? pair.key.range?.[0] : undefined) ?? 0;
          const { line, col } = lineCounter.linePos(at);
          throw bodyMalformed(WHAT, `Map keys must be unique at line ${line}, column ${col}`);
        }
        seen.add(key);
        pending.push(pair.key, pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) pending.push(item);
    }
  }
}
