import type { Command } from 'commander';

export function registerPolicyCommands(_program: Command): void {
  // filled in by its issue
}
