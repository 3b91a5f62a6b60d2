/**
 * `/.keys/` (API.md §16.3; the master key only, authorizer.ts): `POST /.keys/`
 * creates a scoped key and answers its secret, once; `GET /.keys/` lists the
 * keys, `GET /.keys/<name>` shows one (never a secret nor its digest);
 * `DELETE /.keys/<name>` revokes it. Keys live in the cluster state and
 * change in the registry's queue, as templates and aliases do, so every
 * coordinator follows them (through etcd when the state is there) and a
 * revocation holds from the moment its DELETE is answered.
 */
import { apiErrors } from '../errors.js';
import type { IndexRegistry } from '../indexes/registry.js';
import type { RequestContext } from '../request/context.js';
import { decodePiece } from '../request/path.js';
import type { Reply } from '../response/respond.js';
import { checkKeyName, digestOf, KEYS_MAX, listed, newSecret, parseKeyDefinition, type StoredApiKey } from './keys.js';

export const KEYS_ALLOW = 'GET, HEAD, POST, DELETE, OPTIONS';

export class KeyHandlers {
  /** `enabled`: a master key is configured (without one, keys would authorize nothing, and anyone could plant one). */
  constructor(private readonly registry: IndexRegistry, private readonly enabled: boolean) {}

  handle(ctx: RequestContext, rawPath: string): Reply | Promise<Reply> {
    const method = ctx.method;
    if (method === 'OPTIONS') return { status: 200, headers: { Allow: KEYS_ALLOW } };
    if (!this.enabled) throw apiErrors.keysNeedMasterKey();
    const rest = rawPath.slice('/.keys'.length).replace(/^\//, '').replace(/\/$/, '');
    const keys = this.registry.snapshot().keys ?? {};
    if (rest === '') {
      switch (method) {
        case 'GET': case 'HEAD':
          return method === 'HEAD' ? { status: 200 }
            : { status: 200, value: Object.keys(keys).sort().map((name) => listed(name, keys[name] as StoredApiKey)) };
        case 'POST': return this.create(ctx);
      }
      throw apiErrors.methodNotAllowed(method, 'the key list', 'GET, HEAD, POST, OPTIONS');
    }
    const name = decodePiece(rest);
    checkKeyName(name);
    switch (method) {
      case 'GET': case 'HEAD': {
        const key = keys[name];
        if (key === undefined || !Object.hasOwn(keys, name)) throw apiErrors.keyNotFound(name);
        return method === 'HEAD' ? { status: 200 } : { status: 200, value: listed(name, key) };
      }
      case 'DELETE':
        return this.registry.updateState((state) => {
          const current = state.keys;
          if (current === undefined || !Object.hasOwn(current, name)) throw apiErrors.keyNotFound(name);
          const { [name]: _revoked, ...others } = current;
          return { ...state, keys: others };
        }).then(() => ({ status: 204 }));
    }
    throw apiErrors.methodNotAllowed(method, 'a key', 'GET, HEAD, DELETE, OPTIONS');
  }

  /** The new key, with its secret: the only answer that ever carries it. */
  private async create(ctx: RequestContext): Promise<Reply> {
    const { name, key } = parseKeyDefinition(ctx.value(), Date.now());
    const secret = newSecret();
    const stored: StoredApiKey = { ...key, sha256: digestOf(secret).toString('hex') };
    await this.registry.updateState((state) => {
      const current = state.keys ?? {};
      if (Object.hasOwn(current, name)) throw apiErrors.keyExists(name);
      if (Object.keys(current).length >= KEYS_MAX) throw apiErrors.badKey(name, `at most ${KEYS_MAX} keys are kept`);
      return { ...state, keys: { ...current, [name]: stored } };
    });
    return {
      status: 201,
      headers: { Location: `/.keys/${name}`, 'Cache-Control': 'no-store' },
      value: { ...listed(name, stored), _key: secret },
    };
  }
}
