import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { Connection, type ConnectionHost } from './connection.js';
import { resolveHttpServerOptions } from './options.js';
import { ResponseHead } from './response-head.js';
import type { HttpResponse, RequestHandler } from './types.js';

/** A socket that records what the connection does to it, in order. */
class RecordingSocket extends EventEmitter {
  readonly remoteAddress = '127.0.0.1';
  readonly log: string[] = [];
  write(chunk: string | Uint8Array): boolean {
    this.log.push(`write ${typeof chunk === 'string' ? chunk.split(' ', 3)[1] : 'bytes'}`);
    return true;
  }
  cork(): void { this.log.push('cork'); }
  uncork(): void { this.log.push('uncork'); }
  pause(): void {}
  resume(): void {}
  end(): void { this.log.push('end'); }
  destroy(): void { this.log.push('destroy'); }
}

function connect(handler: RequestHandler): RecordingSocket {
  const options = resolveHttpServerOptions({ serverName: 'Tessera/test' });
  const host: ConnectionHost = {
    options,
    parserOptions: { headerBytesMax: options.headerBytesMax, urlBytesMax: options.urlBytesMax, bodyBytesMax: options.bodyBytesMax },
    handler,
    responseHead: new ResponseHead('Tessera/test'),
    connectionClosed: () => undefined,
    takeBodyBytes: () => true,
    giveBodyBytes: () => undefined,
  };
  const socket = new RecordingSocket();
  new Connection(host, socket as unknown as Socket);
  return socket;
}

const pipelined = (paths: string[]) => Buffer.from(paths.map((p) => `GET ${p} HTTP/1.1\r\nHost: t\r\n\r\n`).join(''), 'latin1');
const ok = (): HttpResponse => ({ status: 200, body: 'ok' });

describe('Connection writes', () => {
  it('sends the answers of a synchronous handler before the chunk is done with, pipelined ones in one corked write', () => {
    const socket = connect(ok);
    socket.emit('data', pipelined(['/1', '/2', '/3']));
    // Status lines are `HTTP/1.1 200 OK…`: the second word is the status.
    expect(socket.log).toEqual(['cork', 'write 200', 'write 200', 'write 200', 'uncork']);
  });

  it('holds the answers of an asynchronous handler until the next tick: pipelined ones settled in one turn leave together', async () => {
    const socket = connect(async () => ok());
    socket.emit('data', pipelined(['/1', '/2']));
    expect(socket.log).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(socket.log).toEqual(['cork', 'write 200', 'write 200', 'uncork']);
  });

  it('answers a mix in order: a synchronous answer behind an asynchronous one waits for it', async () => {
    const socket = connect((req) => (req.path === '/slow' ? Promise.resolve({ status: 202, body: 'later' }) : ok()));
    socket.emit('data', pipelined(['/slow', '/1']));
    expect(socket.log).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(socket.log).toEqual(['cork', 'write 202', 'write 200', 'uncork']);
  });
});
