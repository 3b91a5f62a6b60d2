import type { NodeInfo } from '@tessera/client';
import { call } from '../api';
import { useLoad } from '../load';
import { Failure, Panel } from './common';


/** The nodes of the cluster and the shard copies each holds (`GET /.nodes`, API.md §12.2). */
export function NodesView() {
  const nodes = useLoad(() => call<NodeInfo[]>('GET', '/.nodes'), []);
  return (
    <Panel title="Nodes" testId="nodes">
      <Failure error={nodes.error} />
      <button type="button" onClick={nodes.reload}>Refresh</button>
      {nodes.data?.map((node) => (
        <div class="node" key={node.name} data-node={node.name}>
          <h3>
            {node.name} <span class={node.active ? 'badge ok' : 'badge down'}>{node.active ? 'active' : 'inactive'}</span>
            {node.leader === true && <span class="badge">leader</span>}
            {node.role !== undefined && <span class="badge">{node.role}</span>}
            {node.host !== undefined && <span class="address">{node.host}:{node.http_port}</span>}
          </h3>
          {(node.shards?.length ?? 0) > 0 && (
            <table>
              <thead><tr><th>Index</th><th class="number">Shard</th><th>Copy</th><th class="number">Sequence</th><th>In sync</th><th class="number">Documents</th></tr></thead>
              <tbody>
                {node.shards?.map((copy) => (
                  <tr key={`${copy.index}:${copy.shard}`}>
                    <td><code>{copy.index}</code></td>
                    <td class="number">{copy.shard}</td>
                    <td>{copy.primary ? 'primary' : 'replica'}</td>
                    <td class="number">{copy.seq ?? ''}</td>
                    <td>{copy.in_sync === undefined ? '' : copy.in_sync ? 'yes' : 'no'}</td>
                    <td class="number">{copy.documents ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      ))}
    </Panel>
  );
}
