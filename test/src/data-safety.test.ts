/**
 * Writes that must lose nothing and surprise nobody, embedded and on a
 * cluster: a `.` in a written ID never truncates it (API.md §1.3), and a
 * refused write leaves the index schema byte-identical, and a write its
 * shard applied is searchable by its new fields even when the coordinator
 * was killed before it recorded them.
 */
import { SERVER_KINDS, serversForSuite, startCluster, until, type ServerKind } from './cluster-harness.js';
import { call } from './harness.js';

describe.each(SERVER_KINDS)('%s', (kind: ServerKind) => {
  const servers = serversForSuite(kind);
  // Read at call time: the servers start in beforeAll.
  const server = { get url() { return servers().url; } };

  describe('a dot in a written ID (§1.3)', () => {
    it('is refused with 400 naming %2E, and nothing is written under the part before the dot', async () => {
      const r = await call(server, 'PUT', '/dots/gir1.2-cvc-1.0', { package: 'gir1.2-cvc-1.0' });
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ status: 400, code: 'dot_in_document_id' });
      expect(r.json.message).toContain('%2E');
      expect(r.json.message).toContain('/gir1%2E2-cvc-1%2E0');
      expect((await call(server, 'GET', '/dots/gir1')).status).toBe(404);
      for (const method of ['POST', 'UPDATE', 'PATCH', 'DELETE']) {
        const body = method === 'PATCH' ? [{ op: 'add', path: '/a', value: 1 }] : method === 'DELETE' ? undefined : { a: 1 };
        const refused = await call(server, method, '/dots/gir1.2-ostree-1.0?upsert=true', body);
        expect([method, refused.status, refused.json.code]).toEqual([method, 400, 'dot_in_document_id']);
      }
      // Host names and e-mail addresses end in something mime-types knows (`.com`), yet are no content extension.
      expect((await call(server, 'PUT', '/dots/john.doe@example.com', { a: 1 })).json.code).toBe('dot_in_document_id');
      expect((await call(server, 'PUT', '/dots/archive.tar.gz', { a: 1 })).json.code).toBe('dot_in_document_id');
      expect((await call(server, 'GET', '/dots/gir1')).status).toBe(404);
    });

    it('percent-encoded dots stay part of the ID: two packages are two documents', async () => {
      const a = await call(server, 'PUT', '/dots/gir1%2E2-cvc-1%2E0', { package: 'cvc' });
      const b = await call(server, 'PUT', '/dots/gir1%2E2-ostree-1%2E0', { package: 'ostree' });
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(a.json).toMatchObject({ _id: 'gir1.2-cvc-1.0', _version: 1 });
      expect(b.json).toMatchObject({ _id: 'gir1.2-ostree-1.0', _version: 1 });
      expect((await call(server, 'GET', '/dots/gir1%2E2-cvc-1%2E0')).json).toMatchObject({ package: 'cvc', _version: 1 });
      const u = await call(server, 'UPDATE', '/dots/gir1%2E2-cvc-1%2E0', { arch: 'all' });
      expect(u.json).toMatchObject({ package: 'cvc', arch: 'all', _version: 2 });
      expect((await call(server, 'DELETE', '/dots/gir1%2E2-ostree-1%2E0')).status).toBe(204);
      expect((await call(server, 'GET', '/dots/gir1%2E2-cvc-1%2E0')).status).toBe(200);
    });

    it('a known content extension still stores content under the ID before it', async () => {
      const png = Buffer.from('\x89PNG\r\n\x1a\nnot really a picture', 'latin1');
      const r = await call(server, 'PUT', '/pictures/Lenna.png', png, { 'content-type': 'image/png' });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ _id: 'Lenna', _version: 1 });
      const got = await call(server, 'GET', '/pictures/Lenna.png');
      expect(got.status).toBe(200);
      expect(got.headers['content-type']).toBe('image/png');
      expect(got.bytes.equals(png)).toBe(true);
    });
  });

  it('a term in most documents never weighs below zero, even with replaced documents still counted', async () => {
    const index = '/weights/';
    for (let i = 1; i <= 8; i++) expect((await call(server, 'PUT', `${index}${i}`, { text: i <= 7 ? 'common words here' : 'rare' })).status).toBe(200);
    // Replaced documents stay in the term's frequency until a merge purges them; the live count does not.
    for (let round = 0; round < 3; round++) {
      for (let i = 1; i <= 7; i++) expect((await call(server, 'PUT', `${index}${i}`, { text: `common words here ${round}` })).status).toBe(200);
    }
    await call(server, 'COMMIT', index);
    const r = await call(server, 'SEARCH', index, { _query: { text: 'common' }, _limit: 10 });
    expect(r.status).toBe(200);
    const hits = r.json.hits as Array<Record<string, number>>;
    expect(hits.length).toBe(7);
    for (const hit of hits) expect(hit['#weight']).toBeGreaterThanOrEqual(0);
  });

  describe('a refused write leaves the schema byte-identical', () => {
    const schemaText = async (index: string) => {
      const r = await call(server, 'GET', `${index}._schema`);
      expect(r.status).toBe(200);
      return r.text;
    };

    it('bad ID, type mismatch, UPDATE of a missing document, version conflict', async () => {
      const index = '/leak/';
      expect((await call(server, 'PUT', `${index}1`, { a: 1, title: 'first' })).status).toBe(200);
      const before = await schemaText(index);

      const badId = await call(server, 'PUT', `${index}not-a-number`, { leaked: 'x' });
      expect(badId.status).toBe(400);
      const mismatch = await call(server, 'PUT', `${index}2`, { mismatched: 1, a: 'not a number' });
      expect(mismatch.status).toBe(400);
      const missing = await call(server, 'UPDATE', `${index}99`, { leak: 1 });
      expect(missing.status).toBe(404);
      const conflict = await call(server, 'PUT', `${index}1?version=7`, { conflicted: true });
      expect(conflict.status).toBe(409);
      const conflictInBody = await call(server, 'UPDATE', `${index}1`, { _version: 9, conflicted2: 'x' });
      expect(conflictInBody.status).toBe(409);
      const missingContent = await call(server, 'UPDATE', `${index}98`, Buffer.from('bytes'), { 'content-type': 'text/plain' });
      expect(missingContent.status).toBe(404);

      expect(await schemaText(index)).toBe(before);
      // The refused UPDATE's `leak: integer` must not refuse a string now.
      const later = await call(server, 'PUT', `${index}3`, { leak: 'hello', mismatched: 'text', conflicted: 'text' });
      expect(later.status).toBe(200);
      expect((await call(server, 'GET', `${index}1`)).json).toMatchObject({ a: 1, title: 'first', _version: 1 });
    });

    it('a PATCH that adds a field grows the schema: the document is found by it', async () => {
      const index = '/patched/';
      expect((await call(server, 'PUT', `${index}1`, { name: 'Ann' })).status).toBe(200);
      const patched = await call(server, 'PATCH', `${index}1`, [{ op: 'add', path: '/bio', value: 'runs' }, { op: 'add', path: '/age', value: 41 }]);
      expect(patched.status).toBe(200);
      expect(patched.json).toMatchObject({ name: 'Ann', bio: 'runs', age: 41, _version: 2 });
      expect(JSON.parse(await schemaText(index))).toMatchObject({ bio: { _type: 'text' }, age: { _type: 'integer' } });
      expect((await call(server, 'COUNT', index, { _query: { bio: 'runs' } })).json).toEqual({ total: 1 });
      expect((await call(server, 'COUNT', index, { _query: { age: 41 } })).json).toEqual({ total: 1 });
      // A patch giving a known field another type is refused, and writes nothing.
      const mismatch = await call(server, 'PATCH', `${index}1`, [{ op: 'replace', path: '/age', value: 'old' }]);
      expect(mismatch.status).toBe(400);
      expect((await call(server, 'GET', `${index}1`)).json).toMatchObject({ age: 41, _version: 2 });
    });

    it('a RESTORE patch item that adds a field grows the schema as a PATCH does', async () => {
      const index = '/patched-restore/';
      const lines = ['{"_id": "1", "name": "Ann"}', '{"_id": "1", "_op_type": "patch", "_patch": [{"op": "add", "path": "/hobby", "value": "chess"}]}'];
      const r = await call(server, 'RESTORE', index, lines.join('\n'), { 'content-type': 'application/x-ndjson' });
      expect(r.status).toBe(200);
      expect(r.json.items[1]).toMatchObject({ _version: 2 });
      expect(JSON.parse(await schemaText(index))).toMatchObject({ hobby: { _type: 'text' } });
      expect((await call(server, 'COUNT', index, { _query: { hobby: 'chess' } })).json).toEqual({ total: 1 });
    });

    it('a write that is accepted still grows the schema, and concurrent growth keeps every field', async () => {
      const index = '/grow/';
      expect((await call(server, 'PUT', `${index}1`, { a: 1 })).status).toBe(200);
      const writes = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        call(server, 'PUT', `${index}${i + 2}`, { [`f${i}`]: i, shared: 'x' })));
      expect(writes.map((w) => w.status)).toEqual(writes.map(() => 200));
      // Half refused (missing documents), half accepted, all at once.
      const mixed = await Promise.all(Array.from({ length: 10 }, (_, i) =>
        call(server, 'UPDATE', `${index}${i % 2 === 0 ? 1000 + i : i + 2}`, { [`g${i}`]: i })));
      expect(mixed.map((w) => w.status)).toEqual(mixed.map((_, i) => (i % 2 === 0 ? 404 : 200)));
      const schema = JSON.parse(await schemaText(index)) as Record<string, unknown>;
      const fields = Object.keys(schema).filter((k) => !k.startsWith('_'));
      for (let i = 0; i < 20; i++) expect(fields).toContain(`f${i}`);
      for (let i = 0; i < 10; i++) expect(fields.includes(`g${i}`)).toBe(i % 2 === 1);
    });
  });
});

describe('a coordinator killed while a write that grows the schema is on its shard', () => {
  it('leaves the grown schema to its restart: the applied document is found by its new field', async () => {
    const cluster = await startCluster({ nodes: 1 });
    try {
      expect((await call(cluster, 'PUT', '/crash-grow/1', { a: 1 })).status).toBe(200);
      const node = cluster.nodes.get('node1')!.process;
      // The node holds the write unread in its socket: the coordinator has sent it and waits.
      node.kill('SIGSTOP');
      const inFlight = call(cluster, 'PUT', '/crash-grow/2', { fresh: 'hello' }).catch(() => undefined);
      await new Promise((res) => setTimeout(res, 500));
      await cluster.coordinator.kill();
      await inFlight;
      // Resumed, the node reads the write and applies it; its answer finds no coordinator.
      node.kill('SIGCONT');
      await cluster.startCoordinator('coordinator');
      const stored = await until('the write applied by the node', async () => {
        const r = await call(cluster, 'GET', '/crash-grow/2');
        return r.status === 200 ? r.json : undefined;
      });
      expect(stored).toMatchObject({ fresh: 'hello' });
      const schema = await call(cluster, 'GET', '/crash-grow/._schema');
      expect(Object.keys(schema.json as object)).toContain('fresh');
      const found = await call(cluster, 'SEARCH', '/crash-grow/', { _query: { fresh: 'hello' } });
      expect(found.json).toMatchObject({ total: 1 });
      // Nothing is left reserved once it is folded.
      expect((await cluster.storedState()).growthReserved).toBeUndefined();
    } finally {
      await cluster.kill();
    }
  }, 60_000);
});
