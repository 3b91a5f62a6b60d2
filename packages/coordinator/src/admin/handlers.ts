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
}

const TEMPLATES: Collection<IndexTemplate> = {
  parse: (_state, name, body) => parseTemplate(name, body),
  notFound: apiErrors.templateNotFound,
  tooMany: (name) => apiErrors.badTemplate(name, `at most ${TEMPLATES_MAX} templates are kept`),
  entriesMax: TEMPLATES_MAX,
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
};

export class AdminHandlers {
  constructor(private readonly registry: IndexRegistry) {}

  /** `GET /.templates/`, `GET /.aliases/`: every entry by name. */
  list(ctx: RequestContext, collection: AdminCollection): Reply {
    return this.answer(ctx, { ...this.registry.snapshot()[collection] });
  }

  /** GET or HEAD of one entry (404 when absent). */
  get(ctx: RequestContext, collection: AdminCollection): Reply {
    const { kind, name } = this.item(ctx, collection);
    const entries = this.registry.snapshot()[collection] ?? {};
    if (!Object.hasOwn(entries, name)) throw kind.notFound(name);
    return this.answer(ctx, entries[name]);
  }

  /** PUT: create or replace one entry, validated in the registry's queue. */
  put(ctx: RequestContext, collection: AdminCollection): Promise<Reply> {
    const { kind, name } = this.item(ctx, collection);
    const body = ctx.value();
    let entry: unknown;
    return this.registry.updateState((state) => {
      entry = kind.parse(state, name, body);
      const next = { ...state[collection], [name]: entry };
      if (Object.keys(next).length > kind.entriesMax) throw kind.tooMany(name);
      return { ...state, [collection]: next };
    }).then(() => (ctx.options.echo ? { status: 200, value: entry } : { status: 204 }));
  }

  /** DELETE one entry (204, 404 when absent). */
  delete(ctx: RequestContext, collection: AdminCollection): Promise<Reply> {
    const { kind, name } = this.item(ctx, collection);
    return this.registry.updateState((state) => {
      const current = state[collection];
      if (current === undefined || !Object.hasOwn(current, name)) throw kind.notFound(name);
      const { [name]: _deleted, ...rest } = current;
      return { ...state, [collection]: rest };
    }).then(() => ({ status: 204 }));
  }

  /** The collection's rules and the entry's name, from the raw name the path carries (`ctx.path.id`). */
  private item(ctx: RequestContext, collection: AdminCollection): { kind: Collection<unknown>; name: string } {
    const raw = ctx.path.id as string;
    if (collection === 'templates') {
      const name = decodePiece(raw.endsWith('/') ? raw.slice(0, -1) : raw);
      checkTemplateName(name);
      return { kind: TEMPLATES, name };
    }
    return { kind: ALIASES, name: canonicalAliasName(raw) };
  }

  /** GET and HEAD: the value, drilled by `?selector=`. */
  private answer(ctx: RequestContext, value: unknown): Reply {
    if (ctx.method === 'HEAD') return { status: 200 };
    const selector = ctx.options.selector;
    return { status: 200, value: selector === undefined ? value : applySelector(value, selector) };
  }
}
