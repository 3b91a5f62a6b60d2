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

export class KeyHandlers {
  /** `enabled`: a master key is configured (without one, keys would authorize nothing, and anyone could plant one). */
  constructor(private readonly registry: IndexRegistry, private readonly enabled: boolean) {}

  /** `GET /.keys/`: every key, by name (never a secret nor its digest). */
  list(ctx: RequestContext): Reply {
    const keys = this.keys();
    return ctx.method === 'HEAD' ? { status: 200 }
      : { status: 200, value: Object.keys(keys).sort().map((name) => listed(name, keys[name] as StoredApiKey)) };
  }

  /** `GET /.keys/<name>`. */
  get(ctx: RequestContext): Reply {
    const keys = this.keys();
    const name = keyName(ctx);
    const key = keys[name];
    if (key === undefined || !Object.hasOwn(keys, name)) throw apiErrors.keyNotFound(name);
    return ctx.method === 'HEAD' ? { status: 200 } : { status: 200, value: listed(name, key) };
  }

  /** `DELETE /.keys/<name>`: revoked from the moment this answers. */
  delete(ctx: RequestContext): Promise<Reply> {
    const name = keyName(ctx);
    return this.registry.updateState((state) => {
      const current = state.keys;
      if (current === undefined || !Object.hasOwn(current, name)) throw apiErrors.keyNotFound(name);
      const { [name]: _revoked, ...others } = current;
      return { ...state, keys: others };
    }).then(() => ({ status: 204 }));
  }

  private keys(): NonNullable<ReturnType<IndexRegistry['snapshot']>['keys']> {
    return this.registry.snapshot().keys ?? {};
  }

  /**
   * Every request to `/.keys/` but OPTIONS is refused (403) without a master
   * key, whatever its method: the coordinator asks before routing it.
   */
  checkEnabled(method: string): void {
    if (!this.enabled && method !== 'OPTIONS') throw apiErrors.keysNeedMasterKey();
  }

  /** `POST /.keys/`: the new key, with its secret, the only answer that ever carries it. */
  async create(ctx: RequestContext): Promise<Reply> {
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

/** The key a path names (`ctx.path.id`: the raw segment after `/.keys/`), checked. */
function keyName(ctx: RequestContext): string {
  const name = decodePiece(ctx.path.id as string);
  checkKeyName(name);
  return name;
}
