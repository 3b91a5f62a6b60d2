/**
 * The `tessera` command (package.json "bin"): parses the command line with
 * the program of program.ts and turns a failure into its message and exit
 * code (2: usage or configuration, nothing done; 1: failed).
 */
import { buildProgram, CliExit } from './program.js';

buildProgram().parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`tessera: ${(err as Error).message}\n`);
  process.exit(err instanceof CliExit ? err.exitCode : 1);
});
