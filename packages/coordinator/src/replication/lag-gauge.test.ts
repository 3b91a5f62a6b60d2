import { Metrics } from '../observability/metrics.js';

describe('tessera_replication_lag_operations', () => {
  it('shows each replica copy’s lag as the replicator reports it at scrape time', async () => {
    const metrics = new Metrics();
    let lag = 7;
    metrics.attachReplication(async () => [{ index: '/a/', shard: 2, node: 'node3', operations: lag }]);
    expect((await metrics.text()).body).toContain('tessera_replication_lag_operations{index="/a/",shard="2",node="node3"} 7');
    lag = 0;
    expect((await metrics.text()).body).toContain('tessera_replication_lag_operations{index="/a/",shard="2",node="node3"} 0');
  });

  it('is empty, not an error, when the replicator fails or is not attached', async () => {
    const metrics = new Metrics();
    expect((await metrics.text()).body).not.toContain('tessera_replication_lag_operations{');
    metrics.attachReplication(() => Promise.reject(new Error('node down')));
    expect((await metrics.text()).body).not.toContain('tessera_replication_lag_operations{');
  });
});
