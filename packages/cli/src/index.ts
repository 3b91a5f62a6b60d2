/**
 * @tessera/cli — the `tessera` command (bin: main.ts). Exported: the
 * configuration schema (for docs and tests) and the command-line program
 * (tests parse real command lines with it without starting anything).
 */
export {
  COMMANDS, configReference, defaultOf, resolveConfig, settingsOf, SETTINGS,
  type CommandConfigs, type CommandName, type ConfigKey, type CoordinatorConfig, type NodeConfig, type ResolvedConfig, type ServeConfig, type Setting,
} from './config.js';
export { buildProgram, CliExit, type CommandRun, type ProgramOptions } from './program.js';
export { SERVER_ENV, SERVER_NODE_FLAGS } from './node-flags.js';
export { anonymousExposure, clusterExposure, isLoopback } from './exposure.js';
export { shardWorkersOf } from './serve.js';
