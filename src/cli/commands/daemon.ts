import type { Command } from 'commander';

export function registerDaemonCommands(_program: Command): void {
  // filled in by its issue
}
