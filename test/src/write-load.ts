/**
 * A write load for fault tests with real processes: writers that each PUT
 * in a loop through one coordinator, recording every acknowledged write
 * (ID, `_version`, a token unique to the request, when it was sent and
 * acknowledged), and the check that none of them was lost afterwards.
 */
import { call } from './harness.js';

export interface AckedWrite {
  id: string;
  version: number;
  /** Unique to the request: the stored document carries it while this write is its latest. */
  token: string;
  via: string;
  sentAt: number;
  ackedAt: number;
}

export interface Writer {
  /** The coordinator to write through. */
  via: string;
  /** The ID of the writer's i-th write. */
  id(i: number): string;
}

export interface WriteLoad {
  acks: AckedWrite[];
  /** Requests answered with something else than 200, or not answered. */
  failures: number;
  /** The failures by status ('no answer' for a request the coordinator never answered). */
  failureStatuses: Record<string, number>;
  /** Stop every writer; resolves once their last requests are answered. */
  stop(): Promise<void>;
}

/** Start `writers` against `index`; `urlOf(via)` is the coordinator's URL, undefined once it is gone (that writer stops). */
export function startWriteLoad(urlOf: (via: string) => string | undefined, index: string, writers: Writer[]): WriteLoad {
  let stopped = false;
  const load: WriteLoad = { acks: [], failures: 0, failureStatuses: {}, stop: async () => { stopped = true; await running; } };
  const run = async (writer: Writer, w: number): Promise<void> => {
    for (let i = 0; !stopped; i++) {
      const url = urlOf(writer.via);
      if (url === undefined) return;
      const id = writer.id(i);
      const token = `${w}.${i}`;
      const sentAt = Date.now();
      const reply = await call({ url }, 'PUT', `${index}${id}`, { token, via: writer.via }).catch(() => undefined);
      if (reply?.status === 200) {
        load.acks.push({ id, version: (reply.json as { _version: number })._version, token, via: writer.via, sentAt, ackedAt: Date.now() });
      } else {
        load.failures++;
        const status = reply === undefined ? 'no answer' : String(reply.status);
        load.failureStatuses[status] = (load.failureStatuses[status] ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const running = Promise.all(writers.map((writer, w) => run(writer, w)));
  return load;
}

/**
 * The acknowledged writes that `url` does not show: a document missing, at
 * an older version, or at the same version with another write's token (two
 * writes acknowledged with one version). Empty when none was lost.
 */
export async function lostWrites(url: string, index: string, acks: AckedWrite[]): Promise<string[]> {
  const latest = new Map<string, AckedWrite>();
  for (const ack of acks) if ((latest.get(ack.id)?.version ?? 0) < ack.version) latest.set(ack.id, ack);
  const lost: string[] = [];
  for (const [id, ack] of latest) {
    const got = await call({ url }, 'GET', `${index}${id}`);
    const doc = got.json as { _version?: number; token?: string } | undefined;
    if (got.status !== 200 || doc?._version === undefined || doc._version < ack.version || (doc._version === ack.version && doc.token !== ack.token)) {
      lost.push(`${id}@${ack.version} (${got.status} ${doc?._version ?? '-'} ${doc?.token ?? '-'})`);
    }
  }
  return lost;
}

/** Acknowledged writes of one document that share a `_version` (must be none). */
export function sharedVersions(acks: AckedWrite[]): string[] {
  const seen = new Map<string, string>();
  const shared: string[] = [];
  for (const ack of acks) {
    const key = `${ack.id}@${ack.version}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) shared.push(`${key}: ${earlier} and ${ack.token}`);
    seen.set(key, ack.token);
  }
  return shared;
}
