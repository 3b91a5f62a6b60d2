/**
 * The certificate files of `--tls-cert`, `--tls-key` and `--tls-ca`, read
 * and checked once at startup, before anything listens: a file that cannot
 * be read, is not PEM of the right kind, or a key that does not belong to the
 * certificate fails the start with a message naming the flag and the file.
 */
import { readFile } from 'node:fs/promises';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { Logger } from 'pino';

/** A certificate file that cannot be used; the message names the flag and the file. */
export class TlsFileError extends Error {
  override readonly name = 'TlsFileError';
}

/** What is given: paths, '' when a flag is not. */
export interface TlsPaths {
  tlsCert: string;
  tlsKey: string;
}

/** The certificate chain and key to serve HTTPS (and wss://) with, or undefined when neither flag is given. */
export async function loadServerTls(paths: TlsPaths): Promise<SecureContextOptions | undefined> {
  if (paths.tlsCert === '' && paths.tlsKey === '') return undefined;
  if (paths.tlsCert === '' || paths.tlsKey === '') throw new TlsFileError(TLS_PAIR_PROBLEM);
  const cert = await readPem('--tls-cert', paths.tlsCert);
  const key = await readPem('--tls-key', paths.tlsKey);
  check('--tls-cert', paths.tlsCert, 'a PEM certificate (chain)', () => createSecureContext({ cert }));
  check('--tls-key', paths.tlsKey, 'a PEM private key (unencrypted)', () => createSecureContext({ key }));
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new TlsFileError(`--tls-key ${paths.tlsKey} does not belong to the certificate of --tls-cert ${paths.tlsCert}: ${(err as Error).message}`);
  }
  return { cert, key };
}

/** The certificates of `--tls-ca` (PEM, one or more), or undefined for ''. */
export async function loadCa(path: string): Promise<Buffer | undefined> {
  if (path === '') return undefined;
  const ca = await readPem('--tls-ca', path);
  // A secure context takes any text as CAs without complaint: parse the first certificate to catch a wrong file.
  check('--tls-ca', path, 'PEM certificates', () => {
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no "BEGIN CERTIFICATE" block');
    return new X509Certificate(ca);
  });
  return ca;
}

/** A listener whose certificate can be replaced (the HTTP server, the RPC server). */
export interface TlsListener {
  replaceTls(tls: SecureContextOptions): void;
}

/**
 * On SIGHUP, read the certificate and key files again and give them to
 * `listeners` for their new connections; a pair that cannot be used is
 * logged and the one in use is kept. Returns the function that stops it.
 */
export function reloadTlsOnHangup(paths: TlsPaths, listeners: readonly TlsListener[], log: Logger): () => void {
  const reload = (): void => {
    loadServerTls(paths).then((tls) => {
      for (const listener of listeners) listener.replaceTls(tls as SecureContextOptions);
      log.info({ tlsCert: paths.tlsCert, tlsKey: paths.tlsKey }, 'tls certificate reloaded');
    }).catch((err: unknown) => {
      log.error({ err }, 'tls certificate not reloaded: the one loaded before is kept');
    });
  };
  process.on('SIGHUP', reload);
  return () => { process.off('SIGHUP', reload); };
}

/** Said by the config check and here: one of the two alone cannot serve TLS. */
export const TLS_PAIR_PROBLEM = 'tlsCert and tlsKey go together: give both (HTTPS, wss://) or neither (plain HTTP, ws://)';

async function readPem(flag: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new TlsFileError(`${flag} ${path}: cannot read the file: ${(err as Error).message}`);
  }
}

function check(flag: string, path: string, expected: string, parse: () => unknown): void {
  try {
    parse();
  } catch (err) {
    throw new TlsFileError(`${flag} ${path}: not ${expected}: ${(err as Error).message}`);
  }
}
