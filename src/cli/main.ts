#!/usr/bin/env node
// The `pipescaler` command. Each family of subcommands lives in its own file under commands/.
import { Command } from 'commander';
import { registerApiCommands } from './commands/api.js';
import { registerCloudCommand } from './commands/cloud.js';
import { registerDiffCommand } from './commands/diff.js';
import { registerPolicyCommands } from './commands/policy.js';
import { registerRecommendCommand } from './commands/recommend.js';
import { registerDaemonCommands } from './commands/daemon.js';
import { registerHistoryCommands } from './commands/history.js';
import { registerOverrideCommand } from './commands/override.js';
import { runCli } from './run-cli.js';
import { guardOutput } from './output-guard.js';
import { VERSION } from '../version.js';
import { deprecatedEnvLines, withCurrentNames } from '../config/index.js';

guardOutput();

const program = new Command('pipescaler')
  .description('Schedule- and policy-driven autoscaler for data pipes')
  .version(VERSION, '-V, --version', 'print the version')
  .showHelpAfterError();

registerApiCommands(program);
registerCloudCommand(program);
registerPolicyCommands(program);
registerRecommendCommand(program);
registerDiffCommand(program);
registerDaemonCommands(program);
registerHistoryCommands(program);
registerOverrideCommand(program);

// Old environment names still work, said once per run on stderr (never with their values).
for (const line of deprecatedEnvLines(process.env)) process.stderr.write(`${line}\n`);
Object.assign(process.env, withCurrentNames(process.env));

await runCli(program, process.argv);
