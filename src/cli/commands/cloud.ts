import type { Command } from 'commander';

export function registerCloudCommand(_program: Command): void {
  // filled in by its issue
}
