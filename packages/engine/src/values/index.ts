/** Columnar doc values per slot: numbers and strings, range scans into bitsets. */
export { Bitset } from './bitset.js';
export { NumericColumn } from './numeric-column.js';
export { StringColumn } from './string-column.js';
export { StringDictionary, compareBytes } from './string-dictionary.js';
export { NumericColumnBuilder, StringColumnBuilder } from './column-builder.js';
export { gatherNumeric, gatherStrings } from './gather.js';
