/**
 * Shard calls name the index schema instead of carrying it (coordinator
 * `schema-references.ts`, node `held-schemas.ts`), over a transport that
 * copies its params (the MessagePort of `--shard-workers`): the schema
 * crosses once per copy and schema; a node that does not hold it — dropped
 * and made again, restarted — refuses the named call and gets it again with
 * the schema; a changed schema is never taken for the one held.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { SchemaReferencingClient, schemaIdentity, withSchemaReferences } from '@tessera/rpc';
import { ShardNode } from '@tessera/node';
import { InProcessClient, PortClient, servePort } from '@tessera/rpc';

const TAG_ONLY = { _dynamic: false, tag: { _type: 'keyword' } };
const WITH_TITLE = { _dynamic: false, tag: { _type: 'keyword' }, title: { _type: 'text' } };
const BODY = { tag: 'red', title: 'big dogs' };

/** What reached the node: per call, whether it carried its schema or named it, and how it ended. */
interface Seen { method: string; carried: boolean; named: boolean; outcome: string }

let dataDir: string;
let node: ShardNode;
let seen: Seen[];
const ports: MessagePort[] = [];
let client: SchemaReferencingClient;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'tessera-schema-refs-'));
  node = new ShardNode({ name: 'n1', dataDir });
  seen = [];
  const { port1, port2 } = new MessageChannel();
  ports.push(port1, port2);
  // The node is looked up per call, so a test can restart it behind the same port.
  servePort(port2, async (method, params) => {
    const p = params as { schema?: unknown; schemaId?: unknown };
    const entry: Seen = { method, carried: p.schema !== undefined, named: p.schemaId !== undefined, outcome: 'ok' };
    seen.push(entry);
    try {
      return await node.handle(method, params);
    } catch (err) {
      entry.outcome = (err as { code: string }).code;
      throw err;
    }
  });
  client = new SchemaReferencingClient(new PortClient(port1));
});

afterEach(async () => {
  await node.close();
  for (const port of ports.splice(0)) port.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function write(id: string, schema: Record<string, unknown>, shard = 1): Promise<unknown> {
  return client.call('doc.write', { index: '/a/', shard, op: 'index', id, body: BODY, schema });
}

async function indexedFields(id: string, schema: Record<string, unknown>): Promise<string[]> {
  const info = await client.call('doc.info', { index: '/a/', shard: 1, id, schema });
  return Object.keys(info?.terms ?? {}).filter((field) => !field.startsWith('Q')).sort();
}

const carried = (): number => seen.filter((s) => s.carried).length;

describe('shard calls naming their schema', () => {
  it('carry the schema once per copy and schema, and name it after that', async () => {
    await write('x', TAG_ONLY);
    await Promise.all(['y', 'z', 'w'].map((id) => write(id, TAG_ONLY)));
    expect(seen.map((s) => [s.carried, s.named, s.outcome])).toEqual([
      [true, true, 'ok'], [false, true, 'ok'], [false, true, 'ok'], [false, true, 'ok'],
    ]);
    // Another copy gets it once too; a copy of the same content in another object is the same schema.
    await write('x', TAG_ONLY, 2);
    await write('v', structuredClone(TAG_ONLY));
    expect(carried()).toBe(2);
    expect(schemaIdentity(structuredClone(TAG_ONLY))).toBe(schemaIdentity(TAG_ONLY));
    expect(await indexedFields('w', TAG_ONLY)).toEqual(['tag']);
  });

  it('sends a grown schema with its first call, never the one held: the node indexes with the new one', async () => {
    await write('x', TAG_ONLY);
    expect(await indexedFields('x', TAG_ONLY)).toEqual(['tag']);
    expect(schemaIdentity(WITH_TITLE)).not.toBe(schemaIdentity(TAG_ONLY));
    expect(await indexedFields('x', WITH_TITLE)).toEqual(['tag', 'title']);
    expect(seen.at(-1)).toMatchObject({ carried: true, outcome: 'ok' });
    // Searching with the old schema (a request that read it before the change) carries it again.
    expect(await indexedFields('x', TAG_ONLY)).toEqual(['tag']);
    expect(seen.at(-1)).toMatchObject({ carried: true, outcome: 'ok' });
    expect(seen.filter((s) => s.outcome !== 'ok')).toEqual([]);
  });

  it('sends the call again with its schema when the copy was dropped and made again', async () => {
    await write('x', TAG_ONLY);
    await client.call('shard.drop', { index: '/a/', shard: 1 });
    seen = [];
    await write('y', TAG_ONLY);
    expect(seen.map((s) => [s.carried, s.outcome])).toEqual([[false, 'schema_unknown'], [true, 'ok']]);
    expect(await client.call('doc.get', { index: '/a/', shard: 1, id: 'y' })).toMatchObject({ version: 1 });
    expect(await client.call('doc.get', { index: '/a/', shard: 1, id: 'x' })).toBeNull();
  });

  it('sends the call again with its schema when the node restarted, for every call kind alike', async () => {
    await write('x', TAG_ONLY);
    await node.close();
    node = new ShardNode({ name: 'n1', dataDir });
    seen = [];
    expect(await indexedFields('x', TAG_ONLY)).toEqual(['tag']);
    expect(seen.map((s) => [s.method, s.carried, s.outcome])).toEqual([['doc.info', false, 'schema_unknown'], ['doc.info', true, 'ok']]);
    await write('y', TAG_ONLY);
    expect(seen.at(-1)).toMatchObject({ carried: false, outcome: 'ok' });
  });

  it('leaves a client that passes params by reference as it is, and calls without a schema as they are', async () => {
    const inProcess = new InProcessClient(node.handle);
    expect(withSchemaReferences(inProcess)).toBe(inProcess);
    await client.call('shard.open', { index: '/a/', shard: 1 });
    expect(seen).toEqual([{ method: 'shard.open', carried: false, named: false, outcome: 'ok' }]);
  });
});
