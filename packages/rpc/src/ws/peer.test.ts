import { once } from 'node:events';
import fc from 'fast-check';
import { TesseraError } from '@tessera/errors';
import { WebSocket, WebSocketServer } from 'ws';
import type { AnyCalls, RpcHandler } from '../transport.js';
import { connectPeer, type ConnectPeerOptions } from './connect.js';
import { ownHello } from './handshake.js';
import { encode as msgpack } from '@msgpack/msgpack';
import { encodeCall, encodeHello, HELLO_BYTES_MAX, RPC_PROTOCOL_VERSION, type PeerHello } from './messages.js';
import type { RpcPeer } from './peer.js';
import { RpcServer, type RpcServerOptions } from './server.js';
import { silentLogger } from './test-support.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

const echo: RpcHandler = async (method, params) => ({ method, params });

async function startServer(options: Partial<RpcServerOptions<AnyCalls>> = {}): Promise<RpcServer<AnyCalls> & { log: ReturnType<typeof silentLogger> }> {
  const log = silentLogger();
  const server = await RpcServer.listen<AnyCalls>({ identity: { name: 'coordinator', role: 'coordinator' }, logger: log, ...options });
  cleanups.push(() => server.close());
  return Object.assign(server, { log });
}

function dial(url: string, options: Partial<ConnectPeerOptions> = {}): RpcPeer<AnyCalls> {
  const peer = connectPeer<AnyCalls>(url, { identity: { name: 'node1', role: 'node' }, logger: silentLogger(), ...options });
  cleanups.push(() => peer.close());
  return peer;
}

/** A server, and one node joined to it: `accepted` is the server's peer for that node. */
async function pair(serverOptions: Partial<RpcServerOptions<AnyCalls>> = {}, nodeOptions: Partial<ConnectPeerOptions> = {}) {
  let joined!: (peer: RpcPeer<AnyCalls>) => void;
  const accepted = new Promise<RpcPeer<AnyCalls>>((resolve) => { joined = resolve; });
  const server = await startServer({ ...serverOptions, onPeer: (peer, hello) => { serverOptions.onPeer?.(peer, hello); joined(peer); } });
  const node = dial(server.url, nodeOptions);
  return { server, node, coordinator: await accepted };
}

/** A bare ws client speaking the handshake by hand, to send what a peer never would. */
async function rawJoin(url: string, options: { hello?: PeerHello | Uint8Array | false; autoPong?: boolean } = {}): Promise<WebSocket> {
  const socket = new WebSocket(url, { autoPong: options.autoPong ?? true });
  socket.on('error', () => undefined);
  cleanups.push(() => socket.terminate());
  await once(socket, 'open');
  const hello = options.hello ?? ownHello({ name: 'raw', role: 'node' }, 1 << 20);
  if (hello !== false) {
    socket.send(hello instanceof Uint8Array ? hello : encodeHello(hello));
    if (!(hello instanceof Uint8Array) && hello.protocol === RPC_PROTOCOL_VERSION) await once(socket, 'message');
  }
  return socket;
}

function closeCode(socket: WebSocket): Promise<number> {
  return new Promise((resolve) => socket.once('close', (code: number) => resolve(code)));
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => { open = resolve; });
  return { promise, open };
}

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('WebSocket peer', () => {
  it('exchanges hellos: each side knows who is at the other end', async () => {
    const hellos: PeerHello[] = [];
    const { node, coordinator } = await pair({ onPeer: (_peer, hello) => hellos.push(hello) },
      { identity: { name: 'node7', role: 'node', info: { dataDir: '/data/node7' } } });
    await node.whenConnected();
    expect(hellos).toEqual([expect.objectContaining({ name: 'node7', role: 'node', info: { dataDir: '/data/node7' }, protocol: RPC_PROTOCOL_VERSION })]);
    expect(coordinator.remote?.name).toBe('node7');
    expect(node.remote).toMatchObject({ name: 'coordinator', role: 'coordinator' });
  });

  it('matches responses that arrive out of order to their calls', async () => {
    const gates = new Map([['first', gate()], ['second', gate()], ['third', gate()]]);
    const { node } = await pair({ handler: async (method) => { await gates.get(method)!.promise; return method; } });
    const order: string[] = [];
    const calls = ['first', 'second', 'third'].map((method) => node.call(method, {}).then((value) => { order.push(value as string); return value; }));
    for (const method of ['third', 'second', 'first']) {
      gates.get(method)!.open();
      await until(() => order.includes(method));
    }
    expect(await Promise.all(calls)).toEqual(['first', 'second', 'third']);
    expect(order).toEqual(['third', 'second', 'first']);
  });

  it('carries calls both ways at once on one connection, including a call made while serving one', async () => {
    const { node, coordinator } = await pair(
      { handler: async (method, params) => ({ by: 'coordinator', method, params }) },
      {},
    );
    node.serve(async (method, params) => {
      if (method === 'nested') return { by: 'node', inner: await node.call('inner', params) };
      return { by: 'node', method, params };
    });
    const count = 300;
    const calls: Array<Promise<unknown>> = [];
    for (let i = 0; i < count; i++) {
      calls.push(node.call('up', i), coordinator.call('down', i));
    }
    const results = await Promise.all(calls);
    for (let i = 0; i < count; i++) {
      expect(results[2 * i]).toEqual({ by: 'coordinator', method: 'up', params: i });
      expect(results[2 * i + 1]).toEqual({ by: 'node', method: 'down', params: i });
    }
    expect(await coordinator.call('nested', 42)).toEqual({ by: 'node', inner: { by: 'coordinator', method: 'inner', params: 42 } });
    expect(node.inFlight).toBe(0);
    expect(coordinator.inFlight).toBe(0);
  });

  it('round-trips a payload of several MiB intact', async () => {
    const { node } = await pair({ handler: async (_method, params) => params });
    const bytes = new Uint8Array(6 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24;
    const text = 'é€'.repeat(1024 * 1024);
    const back = await node.call('big', { bytes, text }) as { bytes: Uint8Array; text: string };
    expect(Buffer.compare(Buffer.from(back.bytes), Buffer.from(bytes))).toBe(0);
    expect(back.text).toBe(text);
  });

  it('keeps every frame intact and in order when the send buffer bound makes frames wait for the socket to drain', async () => {
    const bound = { sendBufferBytesMax: 64 * 1024 };
    const { node } = await pair({ ...bound, handler: async (_method, params) => params }, bound);
    const calls = Array.from({ length: 40 }, (_, i) => node.call<string>('echo', String(i).padEnd(256 * 1024, String(i % 10))));
    const results = await Promise.all(calls);
    results.forEach((value, i) => expect(value).toBe(String(i).padEnd(256 * 1024, String(i % 10))));
  });

  it('fails a call too large for the other side with 413 and keeps the connection', async () => {
    const { node } = await pair({ messageBytesMax: 64 * 1024, handler: echo });
    await expect(node.call('big', 'x'.repeat(100 * 1024))).rejects.toMatchObject({ code: 'rpc_call_too_large', status: 413 });
    expect(await node.call('small', 1)).toEqual({ method: 'small', params: 1 });
    expect(node.connected).toBe(true);
  });

  it('answers a reply too large for the caller with an error, not a closed connection', async () => {
    const { node, coordinator } = await pair({ messageBytesMax: 64 * 1024 });
    node.serve(async (method) => (method === 'big' ? 'x'.repeat(100 * 1024) : 'ok'));
    await expect(coordinator.call('big', {})).rejects.toMatchObject({ code: 'rpc_reply_too_large', status: 500 });
    expect(await coordinator.call('small', {})).toBe('ok');
  });

  it('closes only the connection that sends an oversized frame, with a log line', async () => {
    const { server, node } = await pair({ messageBytesMax: 64 * 1024, handler: echo });
    const raw = await rawJoin(server.url);
    const closed = closeCode(raw);
    raw.send(new Uint8Array(100 * 1024));
    expect(await closed).toBe(1009);
    expect(server.log.lines.some((line) => line.level === 'warn' && /error/.test(line.msg))).toBe(true);
    expect(await node.call('still', 'here')).toEqual({ method: 'still', params: 'here' });
    await until(() => server.peers.size === 1);
  });

  it('closes a connection that sends a frame which is not a message, with a log line', async () => {
    const { server, node } = await pair({ handler: echo });
    const frames: Array<Uint8Array | string> = [
      Uint8Array.of(0xc1), // a byte MessagePack never uses
      msgpack({ not: 'a message' }),
      msgpack([1, -5, 'doc.get', {}, 0]), // negative id
      msgpack([9, 1]), // unknown kind
      'a text frame',
    ];
    for (const frame of frames) {
      const raw = await rawJoin(server.url);
      const closed = closeCode(raw);
      raw.send(frame);
      expect(await closed).toBe(1007);
    }
    expect(server.log.lines.filter((line) => line.msg.includes('protocol violation'))).toHaveLength(frames.length);
    expect(await node.call('still', 'here')).toEqual({ method: 'still', params: 'here' });
  });

  it('survives random bytes from a peer: the connection closes, the server keeps serving', async () => {
    const { server, node } = await pair({ handler: echo });
    await fc.assert(fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.boolean(), async (bytes, afterHello) => {
      const raw = await rawJoin(server.url, { hello: afterHello ? undefined : bytes });
      if (afterHello) {
        const closed = closeCode(raw);
        raw.send(bytes);
        raw.send(encodeCall(1, 'probe', {}, 0)); // answered only if the random bytes happened to be a valid message
        const code = await Promise.race([closed, once(raw, 'message').then(() => 0)]);
        expect([0, 1002, 1007]).toContain(code);
      } else {
        expect([1002, 1007]).toContain(await closeCode(raw));
      }
      raw.terminate();
    }), { numRuns: 40, seed: 20250101 });
    expect(await node.call('still', 'here')).toEqual({ method: 'still', params: 'here' });
  });

  it('drops a connection that sends more than HELLO_BYTES_MAX before its hello, however large its frame may be', async () => {
    // Before a hello (and its cluster secret) a connection is nobody: a 1 MiB frame (allowed after the hello,
    // up to messageBytesMax) is cut off once HELLO_BYTES_MAX has come, not gathered whole.
    const { server, node } = await pair({ handler: echo, helloTimeoutMs: 30_000 });
    const raw = await rawJoin(server.url, { hello: false });
    const closed = closeCode(raw);
    raw.send(new Uint8Array(1 << 20));
    expect(await closed).toBe(1006);
    expect(server.log.lines.some((line) => line.level === 'warn' && line.msg === 'rpc handshake failed'
      && JSON.stringify(line).includes(`more than ${HELLO_BYTES_MAX} bytes before the hello`))).toBe(true);
    expect(server.peers.size).toBe(1);
    // A hello with a large frame right behind it (sent at once, in the same chunks) is a peer's.
    const joined = await rawJoin(server.url, { hello: false });
    const replies: Buffer[] = [];
    joined.on('message', (data: Buffer) => replies.push(data));
    joined.send(encodeHello(ownHello({ name: 'eager', role: 'node' }, 4 << 20)));
    joined.send(encodeCall(1, 'big', 'x'.repeat(1 << 20), 0));
    await until(() => replies.length === 2);
    expect(replies[1]!.length).toBeGreaterThan(1 << 20);
    expect(await node.call('still', 'here')).toEqual({ method: 'still', params: 'here' });
  });

  it('refuses a peer with another protocol version or no hello', async () => {
    const joined: string[] = [];
    const server = await startServer({ helloTimeoutMs: 50, onPeer: (_peer, hello) => joined.push(hello.name) });
    const wrongVersion = await rawJoin(server.url, { hello: { ...ownHello({ name: 'old', role: 'node' }, 1 << 20), protocol: 99 } });
    const silent = await rawJoin(server.url, { hello: false });
    expect(await Promise.all([closeCode(wrongVersion), closeCode(silent)])).toEqual([1002, 1008]);
    expect(joined).toEqual([]);
    expect(server.peers.size).toBe(0);
  });

  it('answers 503 beyond servingMax incoming calls', async () => {
    const { node } = await pair({ servingMax: 2, handler: () => new Promise(() => undefined) });
    const stuck = [node.call('a', {}, { timeoutMs: 5000 }), node.call('b', {}, { timeoutMs: 5000 })];
    for (const call of stuck) call.catch(() => undefined);
    await expect(node.call('c', {})).rejects.toMatchObject({ code: 'rpc_overloaded', status: 503 });
  });

  it('refuses a URL that is not ws:// or wss://', () => {
    for (const url of ['http://127.0.0.1:1', 'not a url', '']) {
      expect(() => connectPeer<AnyCalls>(url, { identity: { name: 'node1', role: 'node' } })).toThrow(expect.objectContaining({ code: 'invalid_rpc_url', status: 400 }));
    }
  });

  it('still answers when an error carries details MessagePack cannot encode', async () => {
    const { node } = await pair({
      handler: async () => { throw new TesseraError('script_error', 400, 'bad script', { details: { fn: () => 1 } }); },
    });
    await expect(node.call('x', {})).rejects.toMatchObject({ code: 'script_error', status: 400, message: 'bad script' });
    expect(await node.call('x', {}).catch((err: TesseraError) => err.details)).toBeUndefined();
  });

  it('answers a call with no handler with rpc_unknown_method', async () => {
    const { coordinator } = await pair();
    await expect(coordinator.call('doc.get', {})).rejects.toMatchObject({ code: 'rpc_unknown_method', status: 500 });
  });
});

describe('WebSocket peer heartbeats', () => {
  const fast = { heartbeatIntervalMs: 20, heartbeatTimeoutMs: 100 };

  it('loses a joined peer that stops answering pings: pending calls fail with 503, lost fires, later calls fail fast', async () => {
    let joined!: (peer: RpcPeer<AnyCalls>) => void;
    const accepted = new Promise<RpcPeer<AnyCalls>>((resolve) => { joined = resolve; });
    const server = await startServer({ ...fast, onPeer: (peer) => joined(peer) });
    await rawJoin(server.url, { autoPong: false });
    const peer = await accepted;
    const lost = once(peer, 'lost');
    const startedAt = Date.now();
    await expect(peer.call('never', {}, { timeoutMs: 10_000 })).rejects.toMatchObject({ code: 'rpc_unavailable', status: 503 });
    expect(Date.now() - startedAt).toBeLessThan(2000);
    const [err] = await lost as [TesseraError];
    expect(err).toMatchObject({ code: 'rpc_unavailable' });
    expect(server.peers.size).toBe(0);
    await expect(peer.call('after', {})).rejects.toMatchObject({ code: 'rpc_unavailable', status: 503 });
    expect(peer.closed).toBe(true);
  });

  it('loses a coordinator that stops answering pings, and redials', async () => {
    // A hand-made coordinator: answers the hello, then neither pongs nor answers calls.
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', autoPong: false });
    await once(wss, 'listening');
    let connections = 0;
    wss.on('connection', (socket) => {
      connections++;
      socket.once('message', () => socket.send(encodeHello(ownHello({ name: 'mute', role: 'coordinator' }, 1 << 20))));
    });
    cleanups.push(() => new Promise<void>((resolve) => {
      for (const client of wss.clients) client.terminate();
      wss.close(() => resolve());
    }));
    const port = (wss.address() as { port: number }).port;
    const node = dial(`ws://127.0.0.1:${port}`, { ...fast, reconnectInitialMs: 10, reconnectMaxMs: 20 });
    await node.whenConnected();
    const lost = once(node, 'lost');
    await expect(node.call('never', {}, { timeoutMs: 10_000 })).rejects.toMatchObject({ code: 'rpc_unavailable', status: 503 });
    await lost;
    await until(() => connections >= 2);
    expect(node.closed).toBe(false);
  });
});

describe('WebSocket peer reconnection', () => {
  it('reconnects after the server restarts on the same port; calls made meanwhile go through', async () => {
    const first = await startServer({ handler: async (method) => `first:${method}` });
    const port = first.port;
    const node = dial(first.url, { reconnectInitialMs: 10, reconnectMaxMs: 50 });
    expect(await node.call('a', {})).toBe('first:a');
    const lost = once(node, 'lost');
    await first.close();
    await lost;
    expect(node.connected).toBe(false);
    const during = node.call('during', {}, { timeoutMs: 10_000 });
    const joined: string[] = [];
    const second = await startServer({ port, handler: async (method) => `second:${method}`, onPeer: (_peer, hello) => joined.push(hello.name) });
    expect(await during).toBe('second:during');
    expect(await node.call('b', {})).toBe('second:b');
    expect(joined).toEqual(['node1']);
    expect(second.peers.size).toBe(1);
  });

  it('fails a call made while disconnected with 504 when no connection comes within its deadline', async () => {
    const server = await startServer();
    const url = server.url;
    await server.close();
    const node = dial(url, { reconnectInitialMs: 10, reconnectMaxMs: 20 });
    await expect(node.call('x', {}, { timeoutMs: 60 })).rejects.toMatchObject({ code: 'rpc_timeout', status: 504 });
  });

  it('stops redialing on close(), fails the waiting calls, and leaves no timer or socket behind', async () => {
    const resourcesBefore = countResources();
    const server = await startServer();
    const { port, url } = server;
    await server.close();
    const log = silentLogger();
    const node = connectPeer<AnyCalls>(url, { identity: { name: 'node1', role: 'node' }, logger: log, reconnectInitialMs: 5, reconnectMaxMs: 10 });
    cleanups.push(() => node.close());
    const waiting = node.call('x', {}, { timeoutMs: 10_000 });
    await until(() => log.lines.filter((line) => line.msg === 'rpc redial scheduled').length >= 3);
    await node.close();
    await expect(waiting).rejects.toMatchObject({ code: 'rpc_closed' });
    const dialsAtClose = log.lines.filter((line) => line.msg === 'rpc redial scheduled').length;
    const joined: string[] = [];
    const revived = await startServer({ port, onPeer: (_peer, hello) => joined.push(hello.name) });
    await new Promise((resolve) => setTimeout(resolve, 100)); // several backoff periods: a live redial loop would have joined
    expect(joined).toEqual([]);
    expect(log.lines.filter((line) => line.msg === 'rpc redial scheduled')).toHaveLength(dialsAtClose);
    await revived.close();
    await expectNoResourcesLeft(resourcesBefore);
  });

  it('leaves no timer or socket behind once both sides are closed', async () => {
    const resourcesBefore = countResources();
    const { server, node, coordinator } = await pair({ handler: echo, heartbeatIntervalMs: 20, heartbeatTimeoutMs: 1000 });
    node.serve(echo);
    await Promise.all([node.call('a', {}, { timeoutMs: 1000 }), coordinator.call('b', {}, { timeoutMs: 1000 })]);
    await node.close();
    await server.close();
    await expectNoResourcesLeft(resourcesBefore);
  });
});

/**
 * Sockets and timers return to what was there before (handles finish closing
 * a turn or two after their close callbacks; jest's own timers come and go).
 */
async function expectNoResourcesLeft(before: Record<string, number>): Promise<void> {
  const left = (): Array<[string, number]> => Object.entries(countResources()).filter(([kind, count]) => count > (before[kind] ?? 0));
  await until(() => left().length === 0, 2000).catch(() => undefined);
  expect(left()).toEqual([]);
}

/** Timers and sockets alive in this process, by kind. */
function countResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) {
    if (kind === 'Timeout' || kind.startsWith('TCP')) counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return counts;
}

describe('cluster secret', () => {
  const SECRET = 'the-cluster-secret';

  it('a peer with the same secret joins; the accepting side never sees the secret in the hello', async () => {
    const hellos: PeerHello[] = [];
    const { node } = await pair({ clusterSecret: SECRET, onPeer: (_peer, hello) => hellos.push(hello) }, { clusterSecret: SECRET });
    await node.whenConnected();
    expect(hellos).toHaveLength(1);
    expect(hellos[0]).not.toHaveProperty('clusterSecret');
  });

  it('a wrong or missing secret is refused with 4401 and the reason; the dialler logs it at error and redials with backoff', async () => {
    const server = await startServer({ clusterSecret: SECRET, onPeer: () => { throw new Error('no peer may join'); } });
    const refusedWith = async (hello: PeerHello): Promise<[number, string]> => {
      const socket = new WebSocket(server.url);
      socket.on('error', () => undefined);
      cleanups.push(() => socket.terminate());
      await once(socket, 'open');
      const closed = new Promise<[number, string]>((resolve) => socket.once('close', (code: number, why: Buffer) => resolve([code, why.toString()])));
      socket.send(encodeHello(hello));
      return closed;
    };
    const [wrongCode, wrongWhy] = await refusedWith({ ...ownHello({ name: 'wrong', role: 'node' }, 1 << 20), clusterSecret: 'guess' });
    expect(wrongCode).toBe(4401);
    expect(wrongWhy).toMatch(/does not match/);
    const [missingCode, missingWhy] = await refusedWith(ownHello({ name: 'missing', role: 'node' }, 1 << 20));
    expect(missingCode).toBe(4401);
    expect(missingWhy).toMatch(/requires a cluster secret/);

    const log = silentLogger();
    dial(server.url, { clusterSecret: 'another', logger: log, reconnectInitialMs: 10, reconnectMaxMs: 50 });
    await until(() => log.lines.filter((l) => l.msg === 'rpc refused by the other side: cluster secret').length >= 2);
    const refusal = log.lines.find((l) => l.level === 'error')!;
    expect(String(refusal.bindings.reason)).toMatch(/does not match/);
    expect(log.lines.some((l) => l.msg === 'rpc redial scheduled')).toBe(true);
    expect(server.peers.size).toBe(0);
    const serverLines = JSON.stringify(server.log.lines);
    expect(serverLines).toMatch(/rpc peer refused/);
    for (const secret of [SECRET, 'guess', 'another']) expect(serverLines + JSON.stringify(log.lines)).not.toContain(secret);
  });

  it('a server without a secret admits a peer that sends one', async () => {
    const { node } = await pair({}, { clusterSecret: SECRET });
    await node.whenConnected();
  });
});
