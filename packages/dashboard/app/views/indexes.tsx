import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import type { NodeInfo } from '@tessera/client';
import { call, indexUrl } from '../api';
import { hrefOf, useLoad } from '../load';
import { Failure, Json, Panel } from './common';

interface IndexRow {
  path: string;
  shards: number;
  documents: number;
}

/** The indexes whose shard copies the nodes hold (`/.nodes`), each with the numbers of its shards. */
export async function indexShards(): Promise<Map<string, Set<number>>> {
  const nodes = await call<NodeInfo[]>('GET', '/.nodes');
  const shards = new Map<string, Set<number>>();
  for (const node of nodes) {
    for (const copy of node.shards ?? []) {
      const set = shards.get(copy.index) ?? new Set<number>();
      set.add(copy.shard);
      shards.set(copy.index, set);
    }
  }
  return shards;
}

/** The indexes, each counted (COUNT). */
async function loadIndexes(): Promise<IndexRow[]> {
  const shards = await indexShards();
  const paths = [...shards.keys()].sort();
  const counts = await Promise.all(paths.map((path) => call<{ total: number }>('COUNT', indexUrl(path))));
  return paths.map((path, i) => ({ path, shards: (shards.get(path) as Set<number>).size, documents: (counts[i] as { total: number }).total }));
}

export function IndexesView() {
  const indexes = useLoad(loadIndexes, []);
  const [open, setOpen] = useState<string | undefined>(undefined);
  return (
    <Panel title="Indexes" testId="indexes">
      <Failure error={indexes.error} />
      <button type="button" onClick={indexes.reload}>Refresh</button>
      {indexes.data?.length === 0 && <p>No index yet: index a document (<code>PUT /books/1</code>) and refresh.</p>}
      {indexes.data !== undefined && indexes.data.length > 0 && (
        <table>
          <thead><tr><th>Index</th><th class="number">Documents</th><th class="number">Shards</th><th /></tr></thead>
          <tbody>
            {indexes.data.map((row) => (
              <Fragment key={row.path}>
                <tr data-index={row.path}>
                  <td><code>{row.path}</code></td>
                  <td class="number" data-testid="count">{row.documents}</td>
                  <td class="number">{row.shards}</td>
                  <td class="actions">
                    <a href={hrefOf('search', { index: row.path })}>Search</a>
                    <button type="button" onClick={() => setOpen(open === row.path ? undefined : row.path)}>
                      {open === row.path ? 'Hide schema' : 'Schema'}
                    </button>
                  </td>
                </tr>
                {open === row.path && <tr><td colSpan={4}><Schema index={row.path} /></td></tr>}
              </Fragment>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}

function Schema({ index }: { index: string }) {
  const description = useLoad(() => call<{ _schema?: unknown; _settings?: unknown }>('GET', indexUrl(index)), [index]);
  return (
    <div class="schema" data-testid="schema">
      <Failure error={description.error} />
      {description.data !== undefined && <Json value={{ _settings: description.data._settings, _schema: description.data._schema }} />}
    </div>
  );
}
