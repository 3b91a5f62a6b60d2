/**
 * The few figures the metrics view charts, read from the Prometheus text
 * exposition of `/:metrics` (API.md §12.3; the server offers no other form).
 */
export interface Sample {
  /** Seconds since the epoch. */
  at: number;
  requests: number;
  residentBytes: number;
  heapUsedBytes: number;
  documents: number;
  connections: number;
}

/** `name{labels} value` lines by metric name, the values of a name summed over its label sets. */
export function sumsByName(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)/.exec(line);
    if (match === null) continue;
    const value = Number(match[3]);
    if (!Number.isFinite(value)) continue;
    const name = match[1] as string;
    sums.set(name, (sums.get(name) ?? 0) + value);
  }
  return sums;
}

export function sampleOf(text: string, at: number): Sample {
  const sums = sumsByName(text);
  const get = (name: string) => sums.get(name) ?? 0;
  return {
    at,
    requests: get('tessera_http_requests_seconds_count'),
    residentBytes: get('process_resident_memory_bytes'),
    heapUsedBytes: get('nodejs_heap_size_used_bytes'),
    documents: get('tessera_documents'),
    connections: get('tessera_http_current_connections'),
  };
}
