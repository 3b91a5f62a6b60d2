/**
 * MessagePort transport: the embedded server's coordinator calling a shard
 * node that runs on a worker thread (node:worker_threads). Same contract as
 * the in-process and WebSocket transports — deadlines, bounded in-flight
 * calls, errors normalised to TesseraError — with params and results crossing
 * by structured clone (no msgpack: cloning is what the port does anyway, and
 * it keeps Uint8Array, Map, BigInt and undefined as they are).
 *
 * Messages posted in one turn leave together, as one array (Outbox): under
 * load a postMessage per call took a tenth of the main thread's time, and a
 * search sends one call per shard.
 *
 * Bytes: a reply that is a Uint8Array (`doc.content`) is transferred, not
 * copied — the serving side is done with it. Params are copied: the caller
 * may still hold them (a content PUT's body).
 *
 * The client side is an InProcessClient whose handler posts the call and
 * waits for its reply, so both transports share one limiter and one deadline
 * ticker. There is no `callNow`: a call to another thread always waits.
 */
import type { MessagePort, Transferable, Worker } from 'node:worker_threads';
import { TesseraError, toTesseraError } from '@tessera/errors';
import { rpcErrors } from './errors.js';
import { InProcessClient } from './in-process.js';
import type { NodeCalls } from './protocol.js';
import type { CallMap, RpcCallOptions, RpcClient, RpcClientOptions, RpcHandler } from './transport.js';

/** Either end of a port: a MessagePort, or a Worker / `parentPort` seen from the other thread. */
export type PortEnd = Pick<MessagePort | Worker, 'postMessage' | 'on' | 'off'>;

/** What the calling side sends. */
type PortRequest =
  | { kind: 'call'; id: number; method: string; params: unknown }
  /** Close the serving side (a shard node: flush and close its copies), then answer `closed`. */
  | { kind: 'close' };

/** What the serving side answers. */
type PortReply =
  | { kind: 'result'; id: number; result: unknown }
  | { kind: 'error'; id: number; error: ReturnType<TesseraError['toJSON']> }
  | { kind: 'closed' };

/** The symbol a pooled engine buffer is given back with once its consumer is done (engine content/volumes.ts). */
const RELEASE_BUFFER = Symbol.for('tessera.release');

export interface ServePortOptions {
  /** Closes what the handler serves; the client's `close()` waits for it. */
  close?: () => Promise<void>;
  /** An error that is not a TesseraError, before it leaves as a bare 500 (its cause does not cross the port). */
  onUnexpected?: (err: unknown, method: string) => void;
}

/**
 * The messages of one side posted in one turn, sent as one array at the end
 * of it (a microtask): one clone and one wake-up of the other thread for all.
 * If the batch cannot be cloned, each goes alone, and the one that cannot is
 * given to `unclonable`.
 */
class Outbox<T> {
  private queued: Array<{ message: T; transfer: Transferable[] | undefined }> = [];

  constructor(private readonly port: PortEnd, private readonly unclonable: (message: T) => void) {}

  post(message: T, transfer?: Transferable[]): void {
    if (this.queued.length === 0) queueMicrotask(this.flush);
    this.queued.push({ message, transfer });
  }

  private readonly flush = (): void => {
    const queued = this.queued;
    this.queued = [];
    try {
      this.port.postMessage(queued.map((q) => q.message), queued.flatMap((q) => q.transfer ?? []));
    } catch {
      for (const { message, transfer } of queued) {
        try {
          this.port.postMessage([message], transfer);
        } catch {
          this.unclonable(message);
        }
      }
    }
  };
}

/** Serve `handler` on `port`: each call is answered on the same port (the worker thread's side). */
export function servePort(port: PortEnd, handler: RpcHandler, options: ServePortOptions = {}): void {
  const methods = new Map<number, string>();
  const outbox: Outbox<PortReply> = new Outbox(port, (reply) => {
    if (reply.kind === 'result') outbox.post({ kind: 'error', id: reply.id, error: rpcErrors.unencodable(methods.get(reply.id) ?? '').toJSON() });
  });
  const answer = (reply: PortReply, transfer?: Transferable[]): void => {
    if (reply.kind !== 'closed') methods.delete(reply.id);
    outbox.post(reply, transfer);
  };
  port.on('message', (messages: PortRequest[]) => {
    for (const message of messages) serveOne(message);
  });
  const serveOne = (message: PortRequest): void => {
    if (message.kind === 'close') {
      void (options.close?.() ?? Promise.resolve()).catch((err: unknown) => options.onUnexpected?.(err, 'close'))
        .finally(() => answer({ kind: 'closed' }));
      return;
    }
    const { id, method, params } = message;
    methods.set(id, method);
    void Promise.resolve().then(() => handler(method, params)).then((result) => {
      if (!(result instanceof Uint8Array)) {
        answer({ kind: 'result', id, result });
        return;
      }
      const bytes = ownBytes(result);
      answer({ kind: 'result', id, result: bytes }, [bytes.buffer as ArrayBuffer]);
    }, (err: unknown) => {
      if (!(err instanceof TesseraError)) options.onUnexpected?.(err, method);
      answer({ kind: 'error', id, error: toTesseraError(err).toJSON() });
    });
  };
}

/**
 * Bytes in an ArrayBuffer of their own, to transfer: `bytes` itself when it
 * is the whole of a plain buffer, else an exact copy (a clone of a view
 * would copy its whole buffer — an engine read frame, a Buffer pool slab);
 * a pooled engine frame goes back to its pool once copied.
 */
function ownBytes(bytes: Uint8Array): Uint8Array {
  const release = (bytes as { [RELEASE_BUFFER]?: () => void })[RELEASE_BUFFER];
  if (release === undefined && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) {
    return bytes;
  }
  const copy = new Uint8Array(bytes);
  release?.();
  return copy;
}

interface Waiting {
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** The calling side of a port (the main thread's, for a worker it started). */
export class PortClient<C extends CallMap<C> = NodeCalls> implements RpcClient<C> {
  private readonly calls: InProcessClient<C>;
  private readonly waiting = new Map<number, Waiting>();
  private readonly outbox: Outbox<PortRequest>;
  private nextId = 0;
  /** Set once the port is gone (`fail`): every call is refused with it. */
  private failure: TesseraError | undefined;
  private closing: Promise<void> | undefined;
  private whenClosed: (() => void) | undefined;

  constructor(private readonly port: PortEnd, options: Partial<RpcClientOptions> = {}) {
    this.calls = new InProcessClient<C>(this.send, options);
    this.outbox = new Outbox(port, (request) => {
      if (request.kind !== 'call') return;
      this.waiting.get(request.id)?.reject(rpcErrors.unencodable(request.method));
      this.waiting.delete(request.id);
    });
    port.on('message', this.receive);
  }

  get closed(): boolean {
    return this.calls.closed;
  }

  get inFlight(): number {
    return this.calls.inFlight;
  }

  call<M extends keyof C & string>(method: M, params: C[M][0], options?: RpcCallOptions): Promise<C[M][1]> {
    return this.calls.call(method, params, options);
  }

  /**
   * The serving side is gone (its worker exited): the calls waiting fail with
   * 503 `rpc_unavailable`, and so does every later call.
   */
  fail(reason: string): void {
    this.failure ??= rpcErrors.unavailable(reason);
    for (const waiting of this.waiting.values()) waiting.reject(this.failure);
    this.waiting.clear();
    this.whenClosed?.();
  }

  /** Refuse new calls, have the serving side close (`ServePortOptions.close`), and stop listening. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.calls.close();
      if (this.failure === undefined) {
        await new Promise<void>((resolve) => {
          this.whenClosed = resolve;
          this.outbox.post({ kind: 'close' });
        });
      }
      this.port.off('message', this.receive);
      for (const waiting of this.waiting.values()) waiting.reject(rpcErrors.closed());
      this.waiting.clear();
    })();
    return this.closing;
  }

  private readonly send: RpcHandler = (method, params) => {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.outbox.post({ kind: 'call', id, method, params });
    });
  };

  private readonly receive = (replies: PortReply[]): void => {
    for (const reply of replies) {
      if (reply.kind === 'closed') {
        this.whenClosed?.();
        continue;
      }
      const waiting = this.waiting.get(reply.id);
      if (waiting === undefined) continue;
      this.waiting.delete(reply.id);
      if (reply.kind === 'result') waiting.resolve(reply.result);
      else waiting.reject(TesseraError.fromJSON(reply.error));
    }
  };
}
