/**
 * Named scripts (API.md §11.2): a script sent with `_name` and `_body` is
 * remembered under its name, in the cluster state, so that later writes can
 * call it by name alone, through any coordinator and after a restart. A new
 * body under a known name replaces the old one (its chunk is compiled again:
 * the shards' caches are keyed by body).
 *
 * Bounded: the client names them, so at most NAMED_SCRIPTS_MAX are kept and
 * the oldest definition goes first. Sending the same body again changes
 * nothing (no state write), so writes that always carry `_name` and `_body`
 * cost a lookup.
 */
import type { IndexRegistry } from '../indexes/registry.js';
import type { NamedScript } from '../state/cluster-state.js';

export const NAMED_SCRIPTS_MAX = 1000;
/** Largest body remembered under a name (the cluster state is one document). */
export const NAMED_SCRIPT_BYTES_MAX = 64 * 1024;

export class NamedScripts {
  /** The lookup map of the list the cluster state holds now (rebuilt when the list changes). */
  private indexed: { list: readonly NamedScript[]; byName: Map<string, string> } | undefined;

  constructor(private readonly registry: IndexRegistry, private readonly entriesMax = NAMED_SCRIPTS_MAX) {}

  /** The body of the script named `name`, or undefined. */
  body(name: string): string | undefined {
    const list = this.registry.namedScripts();
    if (list.length === 0) return undefined;
    if (this.indexed?.list !== list) this.indexed = { list, byName: new Map(list.map((s) => [s.name, s.body])) };
    return this.indexed.byName.get(name);
  }

  /** Remember `body` under `name`; resolves once the cluster state holds it. */
  async remember(name: string, body: string): Promise<void> {
    if (this.body(name) === body) return;
    await this.registry.updateNamedScripts((current) => {
      if (current.some((s) => s.name === name && s.body === body)) return undefined;
      const next = current.filter((s) => s.name !== name);
      next.push({ name, body });
      return next.length > this.entriesMax ? next.slice(next.length - this.entriesMax) : next;
    });
  }
}
