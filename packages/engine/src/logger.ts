/**
 * The logger the engine writes to: the few methods it calls of a pino
 * logger, so the engine depends on no logging library. A pino `Logger`
 * satisfies it as is; whoever hosts the shards (the node) passes a child
 * with its bindings, and each shard copy makes its own child of that.
 */
export interface EngineLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  child(bindings: Record<string, unknown>): EngineLogger;
}

/** Logs nothing: the default of a shard opened without a logger (tests, tools). */
export const SILENT_LOGGER: EngineLogger = {
  info() {},
  warn() {},
  error() {},
  child() {
    return SILENT_LOGGER;
  },
};
