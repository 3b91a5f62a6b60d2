/** @tessera/cli — the `tessera` command (bin: main.ts). Exported: the configuration schema, for docs and tests. */
export { configReference, resolveConfig, SETTINGS, type ConfigKey, type ServeConfig, type Setting } from './config.js';
