/**
 * Scoped API keys (API.md §16.3): created by `POST /.keys/` with a name, the
 * actions they allow, the index patterns they reach and an optional expiry.
 * The secret is 256 random bits, answered once; the cluster state keeps only
 * its SHA-256 (a digest of that much randomness cannot be reversed or
 * guessed, so no slow hash is needed), so every coordinator knows the key
 * and it survives restarts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { isPlainObject } from '@tessera/schema';
import { apiErrors } from '../errors.js';
import { patternMatches } from '../admin/templates.js';
import { ACTIONS, type Action } from './actions.js';

/** A scoped key as the cluster state holds it. */
export interface StoredApiKey {
  actions: Action[];
  /** Index path patterns, `*` matching any characters, `/` included (as in templates). */
  indexes: string[];
  /** ISO time; absent: the key does not expire. */
  expiresAt?: string;
  createdAt: string;
  /** SHA-256 of the secret, hex. */
  sha256: string;
}

/** A key as `GET /.keys/` lists it: never its secret nor its digest. */
export interface ListedApiKey {
  _name: string;
  _actions: Action[];
  _indexes: string[];
  _expires_at: string | null;
  _created_at: string;
}

/** Bounds on what a client may store (the cluster state is one document). */
export const KEYS_MAX = 1000;
export const KEY_PATTERNS_MAX = 100;
const PATTERN_BYTES_MAX = 245;
/** Key names: one plain token, readable in lists and logs. */
const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const DEFINITION_KEYS = new Set(['_name', '_actions', '_indexes', '_expires_at']);
/** Prefix of generated secrets: recognisable in a leaked file or a secret scanner. */
const SECRET_PREFIX = 'tsk_';

export function checkKeyName(name: string): void {
  if (!KEY_NAME.test(name)) {
    throw apiErrors.badKey(name, 'a name is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  }
}

/** Validate a `POST /.keys/` body into the key to store (its digest still to be added). */
export function parseKeyDefinition(body: unknown, nowMs: number): { name: string; key: Omit<StoredApiKey, 'sha256'> } {
  if (!isPlainObject(body)) throw apiErrors.badKey('', 'the body must be an object with _name, _actions, _indexes and optionally _expires_at');
  const name = body._name;
  if (typeof name !== 'string') throw apiErrors.badKey('', "'_name' must be a string");
  checkKeyName(name);
  for (const key of Object.keys(body)) {
    if (!DEFINITION_KEYS.has(key)) throw apiErrors.badKey(name, `unknown key '${key}' (expected _name, _actions, _indexes, _expires_at)`);
  }
  const actions = body._actions;
  if (!Array.isArray(actions) || actions.length === 0 || !actions.every((a) => typeof a === 'string' && (ACTIONS as readonly string[]).includes(a))) {
    throw apiErrors.badKey(name, `'_actions' must be a non-empty list of ${ACTIONS.join(', ')}`);
  }
  const indexes = body._indexes;
  if (!Array.isArray(indexes) || indexes.length === 0 || indexes.length > KEY_PATTERNS_MAX) {
    throw apiErrors.badKey(name, `'_indexes' must be a list of 1 to ${KEY_PATTERNS_MAX} index path patterns, such as ["/logs/*"] (["/*"]: every index)`);
  }
  const patterns = indexes.map((p: unknown) => {
    if (typeof p !== 'string' || !p.startsWith('/') || Buffer.byteLength(p) > PATTERN_BYTES_MAX) {
      throw apiErrors.badKey(name, `pattern ${JSON.stringify(p)} must be a string starting with '/' (an index path, '*' matching any characters)`);
    }
    // `/logs` and `/logs/` name the same index.
    return p.endsWith('/') || p.endsWith('*') ? p : `${p}/`;
  });
  const key: Omit<StoredApiKey, 'sha256'> = {
    actions: ACTIONS.filter((a) => (actions as string[]).includes(a)),
    indexes: [...new Set(patterns)],
    createdAt: new Date(nowMs).toISOString(),
  };
  const expires = body._expires_at;
  if (expires !== undefined && expires !== null) {
    const ms = typeof expires === 'string' && /^\d{4}-\d\d-\d\dT/.test(expires) ? Date.parse(expires) : Number.NaN;
    if (Number.isNaN(ms)) throw apiErrors.badKey(name, `'_expires_at' must be an ISO 8601 date and time, such as "2027-01-01T00:00:00Z"`);
    if (ms <= nowMs) throw apiErrors.badKey(name, `'_expires_at' ${expires} is already past: the key would never work`);
    key.expiresAt = new Date(ms).toISOString();
  }
  return { name, key };
}

/** A new secret: 256 random bits, URL-safe. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** The digest under which a secret is stored and looked up. */
export function digestOf(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

export function listed(name: string, key: StoredApiKey): ListedApiKey {
  return { _name: name, _actions: key.actions, _indexes: key.indexes, _expires_at: key.expiresAt ?? null, _created_at: key.createdAt };
}

/** Does the key reach every index of `indexes`? */
export function reachesAll(key: Pick<StoredApiKey, 'indexes'>, indexes: readonly string[]): boolean {
  return indexes.every((index) => key.indexes.some((pattern) => patternMatches(pattern, index)));
}
