/**
 * A shard node's own etcd lease (`tessera node --etcd`, docs/cluster.md
 * "Node leases"): the node registers one key under a lease it keeps alive
 * several times per TTL, so that etcd — and through it every coordinator —
 * knows it gone once it stops renewing, whichever coordinators it was
 * connected to (@tessera/coordinator cluster/node-leases.ts acts on it).
 *
 * etcd is not on the node's path: a node cut off from etcd goes on serving
 * (its coordinators judge it by its connection, and by etcd's word that its
 * lease ended), logs the outage once, and grants a new lease and registers
 * again as soon as etcd answers. Stopping revokes the lease, so coordinators
 * see the node leave at once.
 */
import { isEtcdLeaseInvalid, loadEtcdLibrary } from '@tessera/coordinator';
import type { Etcd3, Lease } from 'etcd3';
import type { Logger } from 'pino';

export interface EtcdRegistrationOptions {
  endpoints: string[];
  /** The etcd key to hold. */
  key: string;
  /** Its value, JSON. */
  value: unknown;
  /** The lease's TTL, ms (etcd counts whole seconds: rounded up). */
  ttlMs: number;
  log: Logger;
}

/** Keep-alives per TTL: two may be lost before the lease ends. */
const KEEP_ALIVES_PER_TTL = 3;
/** Longest wait for one etcd call. */
const CALL_TIMEOUT_MS = 3000;

export class EtcdRegistration {
  private lease: Lease | undefined;
  private renewing: Promise<void> | undefined;
  /** Why etcd could not be reached, while it cannot (logged once per outage). */
  private outage: string | undefined;
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  private constructor(private readonly client: Etcd3, private readonly options: EtcdRegistrationOptions) {
    const every = Math.max(100, Math.floor(options.ttlMs / KEEP_ALIVES_PER_TTL));
    this.timer = setInterval(() => void this.renew(), every);
    this.timer.unref();
  }

  /** Registers (resolves once registered, or once the first try failed: the node serves either way) and keeps the registration. */
  static async start(options: EtcdRegistrationOptions): Promise<EtcdRegistration> {
    const { etcd3: { Etcd3 }, cockatiel: { noop } } = await loadEtcdLibrary();
    const client = new Etcd3({
      hosts: options.endpoints,
      dialTimeout: CALL_TIMEOUT_MS,
      // Each call reaches etcd before its deadline or fails; the next renewal tries again (no breaker to wait out once etcd is back).
      faultHandling: { host: () => noop, global: noop },
      grpcOptions: { 'grpc.max_reconnect_backoff_ms': 1000, 'grpc.keepalive_time_ms': 10_000, 'grpc.keepalive_timeout_ms': CALL_TIMEOUT_MS },
    });
    const registration = new EtcdRegistration(client, options);
    await registration.renew();
    return registration;
  }

  /** Stop renewing and revoke the lease: the registration disappears now. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.renewing;
    await this.lease?.revoke({ deadline: Date.now() + CALL_TIMEOUT_MS }).catch(() => undefined);
    this.client.close();
  }

  private renew(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.renewing ??= this.renewOnce().finally(() => { this.renewing = undefined; });
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    const { log, ttlMs, key } = this.options;
    const deadline = (): { deadline: number } => ({ deadline: Date.now() + CALL_TIMEOUT_MS });
    try {
      if (this.lease !== undefined) {
        try {
          await this.lease.keepaliveOnce(deadline());
          this.reachable();
          return;
        } catch (err) {
          if (!isEtcdLeaseInvalid(err)) throw err;
          this.lease.release();
          this.lease = undefined;
          log.warn({ key }, 'the node\'s etcd lease ended: registering again');
        }
      }
      const lease = this.client.lease(Math.max(1, Math.ceil(ttlMs / 1000)), { autoKeepAlive: false, ...deadline() });
      try {
        await lease.grant();
        await lease.put(key).value(JSON.stringify(this.options.value)).options(deadline()).exec();
      } catch (err) {
        // Granted but not registered: nothing should outlive this try (a lease never granted revokes as a no-op).
        void lease.revoke(deadline()).catch(() => undefined);
        throw err;
      }
      this.lease = lease;
      this.reachable();
      log.info({ key, ttlMs }, 'registered in etcd under the node\'s lease');
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (this.outage === undefined) log.warn({ key, reason }, 'cannot reach etcd: the node keeps serving, and registers again once etcd answers');
      this.outage = reason;
    }
  }

  private reachable(): void {
    if (this.outage !== undefined) this.options.log.info({ key: this.options.key }, 'etcd reachable again');
    this.outage = undefined;
  }
}
