/**
 * The etcd client library (etcd3, with gRPC and protobufjs, and cockatiel
 * for its fault handling), loaded when a process first uses etcd: importing
 * it took ~0.9 s of every process's start on a loaded 2-core machine, and
 * only processes given `--etcd` use it (the embedded server never does).
 */
import type * as Cockatiel from 'cockatiel';
import type * as Etcd3Library from 'etcd3';

export interface EtcdLibrary {
  etcd3: typeof Etcd3Library;
  cockatiel: typeof Cockatiel;
}

let loaded: EtcdLibrary | undefined;

export async function loadEtcdLibrary(): Promise<EtcdLibrary> {
  if (loaded === undefined) {
    const [etcd3, cockatiel] = await Promise.all([import('etcd3'), import('cockatiel')]);
    loaded = { etcd3, cockatiel };
  }
  return loaded;
}

/** Whether `err` is etcd3's EtcdLeaseInvalidError (never before the library is loaded: no etcd call can have made it). */
export function isEtcdLeaseInvalid(err: unknown): boolean {
  return loaded !== undefined && err instanceof loaded.etcd3.EtcdLeaseInvalidError;
}
