/** Index settings (API.md §7.1). */
import { apiErrors } from '../errors.js';
import { isPlainObject } from '@tessera/schema';

export interface IndexSettings {
  number_of_shards: number;
  number_of_replicas: number;
}

export const SHARDS_MAX = 9999;
export const REPLICAS_MAX = 9998;

/** Validate a `_settings` object; returns only the keys given. */
export function parseSettings(value: unknown): Partial<IndexSettings> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) throw apiErrors.badSettings("'_settings' must be an object");
  const out: Partial<IndexSettings> = {};
  for (const [key, v] of Object.entries(value)) {
    switch (key) {
      case 'number_of_shards':
        out.number_of_shards = integerIn(key, v, 1, SHARDS_MAX);
        break;
      case 'number_of_replicas':
        out.number_of_replicas = integerIn(key, v, 0, REPLICAS_MAX);
        break;
      default:
        throw apiErrors.badSettings(`Unknown setting '${key}'`);
    }
  }
  return out;
}

function integerIn(key: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw apiErrors.badSettings(`'${key}' must be an integer from ${min} to ${max}`);
  }
  return v;
}
