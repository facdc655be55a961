// The shipped example config as text, with its relative paths (fixtures, holiday calendar) made
// absolute, so a test can write an edited copy anywhere.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export function exampleText(): string {
  return readFileSync('config/pipescaler.yaml', 'utf8')
    .replace('fixtures: cloud.yaml', `fixtures: ${resolve('config/cloud.yaml')}`)
    .replace('{ calendar: holidays/', `{ calendar: ${resolve('config/holidays')}/`);
}
