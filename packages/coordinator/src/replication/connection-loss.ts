/**
 * Which failures of a call to a shard copy mean its node (or the connection
 * to it) went away during the call: the call may or may not have run there.
 * One list, read two ways:
 *
 * - a search asks the next in-sync copy (it changes nothing). Not on a
 *   timeout: a query too slow for one copy would only load the next one the
 *   same way;
 * - a write or read on a primary waits for a new primary and is made there;
 *   a timeout counts too (a node being lost answers nothing), and a stale
 *   term (the copy was demoted meanwhile).
 */
import { toTesseraError } from '@tessera/errors';

const NODE_GONE_CODES = ['rpc_closed', 'rpc_unavailable', 'node_closing', 'node_unavailable', 'shard_closed'];

const COPY_GONE = new Set(NODE_GONE_CODES);
const PRIMARY_LOST = new Set([...NODE_GONE_CODES, 'rpc_timeout', 'stale_primary_term']);

/** A search's copy went away: ask the next in-sync copy. */
export function isCopyGone(err: unknown): boolean {
  return COPY_GONE.has(toTesseraError(err).code);
}

/** A primary's node went away (or timed out, or the copy was demoted): the call may be made again under a new primary. */
export function isPrimaryLost(err: unknown): boolean {
  return PRIMARY_LOST.has(toTesseraError(err).code);
}
