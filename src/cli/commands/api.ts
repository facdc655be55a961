// `pipescaler api ...`: one command per endpoint of the API, a thin layer over ApiClient.
import type { Command } from 'commander';
import type { AlertInput, ApiClient, DashboardInput, ScalingRequest, ServiceRef } from '../../api/index.js';
import { withArticle } from '../../policy/index.js';
import { withClient, type ConnectionFlags } from '../api-connection.js';
import {
  alertColumns,
  dashboardColumns,
  endpointColumns,
  pipeColumns,
  serviceColumns,
  sourceColumns,
} from '../api-views.js';
import { numberFlag, readJsonBody } from '../cli-input.js';
import { formatTable, type Column } from '../table.js';

interface OutputFlags extends ConnectionFlags {
  json?: boolean;
}

const ONE = 'one JSON object: the result as the platform returned it';
const LIST = 'one JSON array: the results as the platform returned them';

/** A leaf command with the connection and output flags every API command takes. */
function leaf(parent: Command, name: string, description: string, json = ONE): Command {
  return parent
    .command(name)
    .description(description)
    .option('--url <url>', 'API base URL (default: env PIPESCALER_API_URL)')
    .option('--key-id <id>', 'API key id (default: env PIPESCALER_KEY_ID)')
    .option('--key-secret-file <file>', 'file holding the API key secret (default: env PIPESCALER_KEY_SECRET)')
    .option('--json', json);
}

function print<T>(flags: OutputFlags, result: T | readonly T[], columns: readonly Column<T>[]): void {
  const out = flags.json
    ? JSON.stringify(result, null, 2)
    : formatTable(Array.isArray(result) ? result : [result as T], columns);
  process.stdout.write(`${out}\n`);
}

function printDeleted(flags: OutputFlags, what: string, deleted: { requestId: string; status: number }): void {
  process.stdout.write(
    flags.json ? `${JSON.stringify(deleted, null, 2)}\n` : `deleted ${what} (requestId ${deleted.requestId})\n`,
  );
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function registerApiCommands(program: Command): void {
  const api = program.command('api').description('call the platform API: one command per endpoint');

  const services = api.command('services').description('database services of an organization');
  leaf(services, 'list', 'list the services, optionally filtered by tags', LIST)
    .argument('<organizationId>')
    .option('--filter <filter>', 'tag:Key or tag:Key=Value; repeat to require several', collect, [])
    .action(async (organizationId: string, flags: OutputFlags & { filter: string[] }) => {
      const { result } = await withClient(flags, (c) => c.listServices(organizationId, flags.filter));
      print(flags, result, serviceColumns);
    });

  const pipes = api.command('pipes').description('data pipes');
  leaf(pipes, 'scale', 'change the scaling of a pipe (no flag: show it as it is)')
    .argument('<organizationId>')
    .argument('<serviceId>')
    .argument('<pipeId>')
    .option('--replicas <n>', 'replicas (stream pipes)')
    .option('--concurrency <n>', 'concurrency (object-storage pipes, 0 = automatic)')
    .option('--cpu <millicores>', 'CPU per replica in millicores (stream pipes)')
    .option('--memory <gb>', 'memory per replica in GB (stream pipes)')
    .option('--idempotency-key <key>', 'Idempotency-Key header (default: a fresh uuid)')
    .action(
      async (
        organizationId: string,
        serviceId: string,
        pipeId: string,
        flags: OutputFlags & {
          replicas?: string;
          concurrency?: string;
          cpu?: string;
          memory?: string;
          idempotencyKey?: string;
        },
      ) => {
        const values = {
          replicas: numberFlag('--replicas', flags.replicas),
          concurrency: numberFlag('--concurrency', flags.concurrency),
          replicaCpuMillicores: numberFlag('--cpu', flags.cpu),
          replicaMemoryGb: numberFlag('--memory', flags.memory),
        };
        const body = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as ScalingRequest;
        const opts = flags.idempotencyKey ? { idempotencyKey: flags.idempotencyKey } : {};
        const { result } = await withClient(flags, (c) =>
          c.scalePipe({ organizationId, serviceId, pipeId }, body, opts),
        );
        print(flags, result, pipeColumns);
      },
    );

  const endpoints = api.command('endpoints').description('reverse private endpoints of a service');
  leaf(endpoints, 'get', 'show a reverse private endpoint')
    .argument('<organizationId>')
    .argument('<serviceId>')
    .argument('<reversePrivateEndpointId>')
    .action(async (organizationId: string, serviceId: string, reversePrivateEndpointId: string, flags: OutputFlags) => {
      const { result } = await withClient(flags, (c) =>
        c.getReversePrivateEndpoint({ organizationId, serviceId, reversePrivateEndpointId }),
      );
      print(flags, result, endpointColumns);
    });

  registerStackFamily(api, {
    noun: 'dashboard',
    plural: 'dashboards',
    idName: 'dashboardId',
    columns: dashboardColumns,
    list: (c, ref) => c.listDashboards(ref),
    get: (c, ref, id) => c.getDashboard({ ...ref, dashboardId: id }),
    create: (c, ref, body) => c.createDashboard(ref, body as DashboardInput),
    update: (c, ref, id, body) => c.updateDashboard({ ...ref, dashboardId: id }, body as DashboardInput),
    remove: (c, ref, id) => c.deleteDashboard({ ...ref, dashboardId: id }),
  });
  registerStackFamily(api, {
    noun: 'alert',
    plural: 'alerts',
    idName: 'alertId',
    columns: alertColumns,
    list: (c, ref) => c.listAlerts(ref),
    get: (c, ref, id) => c.getAlert({ ...ref, alertId: id }),
    create: (c, ref, body) => c.createAlert(ref, body as AlertInput),
    update: (c, ref, id, body) => c.updateAlert({ ...ref, alertId: id }, body as AlertInput),
    remove: (c, ref, id) => c.deleteAlert({ ...ref, alertId: id }),
  });

  const sources = api.command('sources').description('observability data sources of a service');
  leaf(sources, 'list', 'list the data sources', LIST)
    .argument('<organizationId>')
    .argument('<serviceId>')
    .action(async (organizationId: string, serviceId: string, flags: OutputFlags) => {
      const { result } = await withClient(flags, (c) => c.listSources({ organizationId, serviceId }));
      print(flags, result, sourceColumns);
    });
}

interface StackFamily<T> {
  noun: string;
  plural: string;
  idName: string;
  columns: readonly Column<T>[];
  list(c: ApiClient, ref: ServiceRef): Promise<{ result: T[] }>;
  get(c: ApiClient, ref: ServiceRef, id: string): Promise<{ result: T }>;
  create(c: ApiClient, ref: ServiceRef, body: unknown): Promise<{ result: T }>;
  update(c: ApiClient, ref: ServiceRef, id: string, body: unknown): Promise<{ result: T }>;
  remove(c: ApiClient, ref: ServiceRef, id: string): Promise<{ requestId: string; status: number }>;
}

// Dashboards and alerts have the same five operations; the body is sent as given (the platform
// answers a bad one with a 400 naming the member).
function registerStackFamily<T>(api: Command, f: StackFamily<T>): void {
  const family = api.command(f.plural).description(`observability ${f.plural} of a service`);
  const withRef = (cmd: Command) => cmd.argument('<organizationId>').argument('<serviceId>');
  type BodyFlags = OutputFlags & { file?: string };

  withRef(leaf(family, 'list', `list the ${f.plural}`, LIST)).action(
    async (organizationId: string, serviceId: string, flags: OutputFlags) => {
      const { result } = await withClient(flags, (c) => f.list(c, { organizationId, serviceId }));
      print(flags, result, f.columns);
    },
  );
  withRef(leaf(family, 'get', `show ${withArticle(f.noun)}`))
    .argument(`<${f.idName}>`)
    .action(async (organizationId: string, serviceId: string, id: string, flags: OutputFlags) => {
      const { result } = await withClient(flags, (c) => f.get(c, { organizationId, serviceId }, id));
      print(flags, result, f.columns);
    });
  withRef(leaf(family, 'create', `create ${withArticle(f.noun)} from JSON (--file F or stdin)`))
    .option('--file <file>', 'JSON body ("-" for stdin)')
    .action(async (organizationId: string, serviceId: string, flags: BodyFlags) => {
      const body = await readJsonBody(flags.file);
      const { result } = await withClient(flags, (c) => f.create(c, { organizationId, serviceId }, body));
      print(flags, result, f.columns);
    });
  withRef(leaf(family, 'update', `replace ${withArticle(f.noun)} with JSON (--file F or stdin)`))
    .argument(`<${f.idName}>`)
    .option('--file <file>', 'JSON body ("-" for stdin)')
    .action(async (organizationId: string, serviceId: string, id: string, flags: BodyFlags) => {
      const body = await readJsonBody(flags.file);
      const { result } = await withClient(flags, (c) => f.update(c, { organizationId, serviceId }, id, body));
      print(flags, result, f.columns);
    });
  withRef(leaf(family, 'delete', `delete ${withArticle(f.noun)}`, 'one JSON object: {requestId, status}'))
    .argument(`<${f.idName}>`)
    .action(async (organizationId: string, serviceId: string, id: string, flags: OutputFlags) => {
      const deleted = await withClient(flags, (c) => f.remove(c, { organizationId, serviceId }, id));
      printDeleted(flags, `${f.noun} ${id}`, deleted);
    });
}
