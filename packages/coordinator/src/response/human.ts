/** Human-readable durations (API.md §2.1 `human`): "39.889ms", "1.2s". */
export function humanDuration(seconds: number): string {
  if (seconds < 1e-3) return `${round(seconds * 1e6)}µs`;
  if (seconds < 1) return `${round(seconds * 1e3)}ms`;
  if (seconds < 60) return `${round(seconds)}s`;
  return `${round(seconds / 60)}min`;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** A duration as the `human` flag asks: a string, or seconds as a float. */
export function duration(seconds: number, human: boolean): string | number {
  return human ? humanDuration(seconds) : seconds;
}

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** Human-readable sizes (API.md §6 INFO): "676.4KiB", "12B". */
export function humanBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes}B` : `${Math.round(value * 10) / 10}${BYTE_UNITS[unit]}`;
}
