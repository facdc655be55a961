// `pipescaler cloud`: serve the embedded cloud from a fixtures file until SIGINT/SIGTERM.
import type { Command } from 'commander';
// The server (fastify, ajv) is imported when the command runs, so no other command loads it.
import { demoCredentials, loadFixtures, startCloud } from '../../cloud/index.js';
import { UserError } from '../run-cli.js';

interface CloudFlags {
  host: string;
  port: string;
  fixtures: string;
  rateLimit: boolean;
}

export function registerCloudCommand(program: Command): void {
  program
    .command('cloud')
    .description('serve the embedded cloud (a spec-faithful fake of the platform API) from a fixtures file')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', '8123')
    .option('--fixtures <file>', 'fixtures YAML', 'config/cloud.yaml')
    .option('--no-rate-limit', 'serve without the per-key rate limit')
    .action(async (flags: CloudFlags) => {
      const port = Number(flags.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new UserError(`--port must be 0-65535, got ${flags.port}`);
      const fixtures = loadFixtures(flags.fixtures);
      const cloud = await startCloud({
        fixtures,
        host: flags.host,
        port,
        ...(flags.rateLimit ? {} : { rateLimit: false as const }),
      });
      const demo = demoCredentials(fixtures);
      // The secret stays in the fixtures file; only the ids are printed.
      process.stdout.write(`embedded cloud listening on ${cloud.url}\n`);
      process.stdout.write(`organizationId ${demo.organizationId}\n`);
      process.stdout.write(`keyId ${demo.keyId} (secret: see ${flags.fixtures})\n`);
      await new Promise<void>((resolve) => {
        const stop = (signal: NodeJS.Signals) => {
          process.stdout.write(`${signal}: closing\n`);
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          cloud.close().then(resolve, resolve);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
