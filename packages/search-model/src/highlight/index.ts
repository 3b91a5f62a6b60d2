export { HIGHLIGHT_LIMITS, parseHighlight, type HighlightField, type HighlightRequest } from './request.js';
