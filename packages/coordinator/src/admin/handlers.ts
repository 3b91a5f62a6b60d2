/**
 * `/.templates/` and `/.aliases/` (API.md §16.1, §16.2): PUT (create or
 * replace), GET one, GET the list, DELETE (204/404). Both live in the
 * cluster state and change in the registry's queue, as index creations do,
 * so an alias and an index never take the same name, and a template applies
 * to every index created after its PUT answered.
 */
import { apiErrors } from '../errors.js';
import type { IndexRegistry } from '../indexes/registry.js';
import type { ClusterState } from '../state/cluster-state.js';
import type { RequestContext } from '../request/context.js';
import { decodePiece } from '../request/path.js';
import type { Reply } from '../response/respond.js';
import { applySelector } from '../response/selector.js';
import { ALIASES_MAX, canonicalAliasName, parseAlias, type IndexAlias } from './aliases.js';
import { checkTemplateName, parseTemplate, TEMPLATES_MAX, type IndexTemplate } from './templates.js';

export type AdminCollection = 'templates' | 'aliases';

/** An administration path: its collection and the item named, if any (raw, percent-encoded). */
export interface AdminPath {
  collection: AdminCollection;
  name: string | undefined;
}

/** `/.templates`, `/.templates/`, `/.templates/<name>`, `/.aliases/<index path>`; undefined for every other path. */
export function adminPathOf(rawPath: string): AdminPath | undefined {
  // One character test keeps every ordinary path off the slow checks.
  if (rawPath.charCodeAt(1) !== 0x2e) return undefined;
  for (const collection of ['templates', 'aliases'] as const) {
    const root = `/.${collection}`;
    if (!rawPath.startsWith(root)) continue;
    const rest = rawPath.slice(root.length);
    if (rest === '' || rest === '/') return { collection, name: undefined };
    if (rest.startsWith('/')) return { collection, name: rest.slice(1) };
  }
  return undefined;
}

/** What differs between the two collections: their entries' validation and errors. */
interface Collection<T> {
  /** The entry a PUT stores, validated against the state in the registry's queue (throws to refuse). */
  parse(state: ClusterState, name: string, body: unknown): T;
  notFound(name: string): Error;
  tooMany(name: string): Error;
  entriesMax: number;
  /** `a template`, `the alias list`: for 405s. */
  what: string;
}

const TEMPLATES: Collection<IndexTemplate> = {
  parse: (_state, name, body) => parseTemplate(name, body),
  notFound: apiErrors.templateNotFound,
  tooMany: (name) => apiErrors.badTemplate(name, `at most ${TEMPLATES_MAX} templates are kept`),
  entriesMax: TEMPLATES_MAX,
  what: 'template',
};

const ALIASES: Collection<IndexAlias> = {
  parse(state, name, body) {
    // In the queue: an index created under this name meanwhile is seen.
    if (Object.hasOwn(state.indexes, name)) throw apiErrors.aliasNamesIndex(name);
    const current = state.aliases ?? {};
    // An alias named by another alias would resolve to nothing: aliases name indexes only.
    for (const [other, value] of Object.entries(current)) {
      if (value._indexes.includes(name)) throw apiErrors.badAlias(name, `alias ${other} names it as an index`);
    }
    return parseAlias(name, body, (path) => Object.hasOwn(current, path));
  },
  notFound: apiErrors.aliasNotFound,
  tooMany: (name) => apiErrors.badAlias(name, `at most ${ALIASES_MAX} aliases are kept`),
  entriesMax: ALIASES_MAX,
  what: 'alias',
};

export class AdminHandlers {
  constructor(private readonly registry: IndexRegistry) {}

  handle(ctx: RequestContext, at: AdminPath): Reply | Promise<Reply> {
    if (at.collection === 'templates') {
      const name = at.name === undefined ? undefined : decodePiece(at.name.endsWith('/') ? at.name.slice(0, -1) : at.name);
      if (name !== undefined) checkTemplateName(name);
      return this.collection(ctx, 'templates', TEMPLATES, name);
    }
    return this.collection(ctx, 'aliases', ALIASES, at.name === undefined ? undefined : canonicalAliasName(at.name));
  }

  /** GET the list; GET, HEAD, PUT (create or replace) or DELETE one entry. */
  private collection<K extends AdminCollection, T extends NonNullable<ClusterState[K]>[string]>(ctx: RequestContext, key: K,
    kind: Collection<T>, name: string | undefined): Reply | Promise<Reply> {
    const method = ctx.method;
    const entries = (this.registry.snapshot()[key] ?? {}) as Record<string, T>;
    if (name === undefined) {
      if (method === 'GET' || method === 'HEAD') return this.answer(ctx, { ...entries });
      throw apiErrors.methodNotAllowed(method, `the ${kind.what} list`, 'GET, HEAD, OPTIONS');
    }
    switch (method) {
      case 'GET': case 'HEAD':
        if (!Object.hasOwn(entries, name)) throw kind.notFound(name);
        return this.answer(ctx, entries[name]);
      case 'PUT': {
        const body = ctx.value();
        let entry: T | undefined;
        return this.registry.updateState((state) => {
          entry = kind.parse(state, name, body);
          const next = { ...state[key], [name]: entry };
          if (Object.keys(next).length > kind.entriesMax) throw kind.tooMany(name);
          return { ...state, [key]: next };
        }).then(() => (ctx.options.echo ? { status: 200, value: entry } : { status: 204 }));
      }
      case 'DELETE':
        return this.registry.updateState((state) => {
          const current = state[key];
          if (current === undefined || !Object.hasOwn(current, name)) throw kind.notFound(name);
          const { [name]: _deleted, ...rest } = current;
          return { ...state, [key]: rest };
        }).then(() => ({ status: 204 }));
    }
    throw apiErrors.methodNotAllowed(method, `a ${kind.what}`, 'GET, HEAD, PUT, DELETE, OPTIONS');
  }

  /** GET and HEAD: the value, drilled by `?selector=`. */
  private answer(ctx: RequestContext, value: unknown): Reply {
    if (ctx.method === 'HEAD') return { status: 200 };
    const selector = ctx.options.selector;
    return { status: 200, value: selector === undefined ? value : applySelector(value, selector) };
  }
}
