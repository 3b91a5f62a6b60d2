/** Helpers shared by the WebSocket transport's tests. */
import type { RpcLogger } from './options.js';

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  bindings: Record<string, unknown>;
  msg: string;
}

/** A logger that keeps its lines for assertions instead of printing them. */
export function silentLogger(): RpcLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  return {
    lines,
    debug: (bindings, msg) => { lines.push({ level: 'debug', bindings, msg }); },
    info: (bindings, msg) => { lines.push({ level: 'info', bindings, msg }); },
    warn: (bindings, msg) => { lines.push({ level: 'warn', bindings, msg }); },
    error: (bindings, msg) => { lines.push({ level: 'error', bindings, msg }); },
  };
}
