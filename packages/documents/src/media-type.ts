/**
 * The one rule for telling media types apart: a body's decoder (http), a
 * stored content entry (engine: one entry per media type), an `Accept` match.
 */

/** Lower-cased `type/subtype` of a Content-Type value, parameters stripped (`Text/Plain; charset=x` → `text/plain`); '' when absent. */
export function mediaTypeOf(contentType?: string): string {
  if (contentType === undefined) return '';
  const semi = contentType.indexOf(';');
  const bare = semi < 0 ? contentType : contentType.slice(0, semi);
  return bare.trim().toLowerCase();
}
