import type { Command } from 'commander';

export function registerApiCommands(_program: Command): void {
  // filled in by its issue
}
