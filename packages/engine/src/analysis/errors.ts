/** Error catalogue of text analysis (merged into the engine catalogue by the lead). */
import { TesseraError } from '@tessera/errors';

export const analysisErrors = {
  unknownLanguage: (language: string) => new TesseraError('invalid_language', 400, `Unknown language: ${language}`),
  invalidStrategy: (name: string, value: string) => new TesseraError('invalid_analysis_option', 400, `Invalid ${name}: ${value}`),
};
