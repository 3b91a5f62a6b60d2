/** Bytes (and char codes) of the HTTP/1.1 grammar that the parser compares against. */
export const CR = 13;
export const LF = 10;
export const SP = 32;
export const HTAB = 9;
