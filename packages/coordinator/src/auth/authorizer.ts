/**
 * The one authorization step of the coordinator (API.md §16.3): with a master
 * key configured, every request but the health checks carries
 * `Authorization: Bearer <key>`. The master key may do anything; a scoped
 * key (keys.ts) may do the actions it lists on the indexes its patterns
 * reach, until it expires, and never manage keys. What a request needs comes
 * from the one table of actions.ts.
 *
 * The presented key is hashed before anything is compared: the master key's
 * digest is compared with `timingSafeEqual` (equal lengths, constant time, so
 * neither the key nor its length leaks), and scoped keys are looked up by
 * digest, which tells an attacker nothing about any stored secret. Neither
 * the key nor its digest ever appears in an error message.
 */
import { timingSafeEqual } from 'node:crypto';
import type { TesseraError } from '@tessera/errors';
import type { HttpRequest } from '@tessera/http';
import { apiErrors } from '../errors.js';
import { accessOf, type Access } from './actions.js';
import { digestOf, reachesAll, type StoredApiKey } from './keys.js';

/** Why a request was refused, for the metrics (a bounded label set). */
export type AuthFailure = 'missing' | 'invalid' | 'expired' | 'forbidden';

/** `Bearer <token>`: the scheme is case-insensitive (RFC 9110 §11.1), one or more spaces before the token. */
const BEARER = /^bearer +(\S+)$/i;

interface KnownKey {
  name: string;
  key: StoredApiKey;
  expiresAtMs: number;
}

export class Authorizer {
  private readonly masterDigest: Buffer;
  /** Scoped keys by their digest (hex), rebuilt when the cluster state's keys change. */
  private byDigest = new Map<string, KnownKey>();
  private builtFrom: Readonly<Record<string, StoredApiKey>> | undefined;

  /**
   * `masterKey`: the configured key; `keys`: the scoped keys of the cluster
   * state as they are now (a new object whenever they change).
   */
  constructor(masterKey: string, private readonly keys: () => Readonly<Record<string, StoredApiKey>> | undefined,
    private readonly failed: (reason: AuthFailure) => void = () => undefined) {
    this.masterDigest = digestOf(masterKey);
  }

  /**
   * Undefined when the request may go on, else the error to answer it with.
   * `path`: what the request is served as (a browser's `GET /` is the
   * dashboard's page), its own path by default.
   */
  check(req: HttpRequest, path = req.path): TesseraError | undefined {
    const access = accessOf(req.method, path);
    if (access.kind === 'open') return undefined;
    const header = req.headers.authorization;
    if (header === undefined) return this.refuse('missing', apiErrors.unauthorized('this server needs an API key: send Authorization: Bearer <key>'));
    const token = BEARER.exec(header)?.[1];
    if (token === undefined) return this.refuse('invalid', apiErrors.unauthorized("the Authorization header must be 'Bearer <key>'"));
    const digest = digestOf(token);
    if (timingSafeEqual(digest, this.masterDigest)) return undefined;
    const known = this.scopedKeys().get(digest.toString('hex'));
    if (known === undefined) return this.refuse('invalid', apiErrors.unauthorized('the API key is not valid'));
    if (Date.now() >= known.expiresAtMs) return this.refuse('expired', apiErrors.keyExpired(known.name, known.key.expiresAt as string));
    const denied = deniedBy(known, access);
    return denied === undefined ? undefined : this.refuse('forbidden', denied);
  }

  private refuse(reason: AuthFailure, error: TesseraError): TesseraError {
    this.failed(reason);
    return error;
  }

  private scopedKeys(): Map<string, KnownKey> {
    const keys = this.keys();
    if (keys !== this.builtFrom) {
      const next = new Map<string, KnownKey>();
      for (const [name, key] of Object.entries(keys ?? {})) {
        next.set(key.sha256, { name, key, expiresAtMs: key.expiresAt === undefined ? Infinity : Date.parse(key.expiresAt) });
      }
      this.byDigest = next;
      this.builtFrom = keys;
    }
    return this.byDigest;
  }
}

/** Why a scoped key may not make this request, or undefined when it may. */
function deniedBy({ name, key }: KnownKey, access: Exclude<Access, { kind: 'open' }>): TesseraError | undefined {
  if (access.kind === 'master') return apiErrors.forbidden(name, 'only the master key manages keys');
  if (!key.actions.includes(access.action)) return apiErrors.forbidden(name, `it does not allow the '${access.action}' action this request needs`);
  if (!reachesAll(key, access.indexes)) {
    const outside = access.indexes.filter((index) => !reachesAll(key, [index]));
    return apiErrors.forbidden(name, `its index patterns do not reach ${outside.join(', ')}`);
  }
  return undefined;
}
