#!/usr/bin/env node
// The `tessera` command (package.json "bin"): runs the compiled CLI.
import '../dist/main.js';
