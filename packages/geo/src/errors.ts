/**
 * Error catalogue of the geo package: every malformed geometry, coordinate,
 * distance or EWKT text is a 400 `invalid_geo` (API.md §8.6: "DMS/DD text →
 * 400"). Messages name what was wrong and, for EWKT, what was expected.
 */
import { TesseraError } from '@tessera/errors';

export const geoErrors = {
  invalid: (message: string) => new TesseraError('invalid_geo', 400, message),
};
