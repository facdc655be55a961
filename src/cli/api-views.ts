// The table columns of each resource shown by `pipescaler api`.
import {
  pipeKind,
  type Alert,
  type Dashboard,
  type Pipe,
  type ReversePrivateEndpoint,
  type Service,
  type Source,
} from '../api/index.js';
import type { Column } from './table.js';

export const serviceColumns: readonly Column<Service>[] = [
  { header: 'ID', value: (s) => s.id },
  { header: 'NAME', value: (s) => s.name },
  { header: 'STATE', value: (s) => s.state },
  { header: 'TAGS', value: (s) => (s.tags ?? []).map((t) => (t.value === undefined ? t.key : `${t.key}=${t.value}`)) },
];

export const pipeColumns: readonly Column<Pipe>[] = [
  { header: 'ID', value: (p) => p.id },
  { header: 'NAME', value: (p) => p.name },
  { header: 'STATE', value: (p) => p.state },
  { header: 'KIND', value: (p) => pipeKind(p.source) },
  { header: 'REPLICAS', value: (p) => p.scaling.replicas },
  { header: 'CPU_M', value: (p) => p.scaling.replicaCpuMillicores },
  { header: 'MEMORY_GB', value: (p) => p.scaling.replicaMemoryGb },
  { header: 'CONCURRENCY', value: (p) => p.scaling.concurrency },
];

export const endpointColumns: readonly Column<ReversePrivateEndpoint>[] = [
  { header: 'ID', value: (e) => e.id },
  { header: 'TYPE', value: (e) => e.type },
  { header: 'STATUS', value: (e) => e.status },
  { header: 'AUTH', value: (e) => e.mskAuthentication },
  { header: 'DESCRIPTION', value: (e) => e.description },
];

export const dashboardColumns: readonly Column<Dashboard>[] = [
  { header: 'ID', value: (d) => d.id },
  { header: 'NAME', value: (d) => d.name },
  { header: 'TILES', value: (d) => d.tiles.length },
  { header: 'TAGS', value: (d) => d.tags },
  { header: 'UPDATED', value: (d) => d.updatedAt },
];

export const alertColumns: readonly Column<Alert>[] = [
  { header: 'ID', value: (a) => a.id },
  { header: 'NAME', value: (a) => a.name },
  { header: 'STATE', value: (a) => a.state },
  { header: 'INTERVAL', value: (a) => a.interval },
  {
    header: 'CONDITION',
    value: (a) => `${a.thresholdType} ${a.threshold}${a.thresholdMax == null ? '' : `..${a.thresholdMax}`}`,
  },
  {
    header: 'ON',
    value: (a) => (a.source === 'tile' ? `${a.dashboardId ?? '-'}/${a.tileId ?? '-'}` : a.savedSearchId),
  },
  { header: 'CHANNEL', value: (a) => a.channel.type },
];

export const sourceColumns: readonly Column<Source>[] = [
  { header: 'ID', value: (s) => s.id },
  { header: 'NAME', value: (s) => s.name },
  { header: 'KIND', value: (s) => s.kind },
  { header: 'TABLE', value: (s) => `${s.from.databaseName}.${s.from.tableName}` },
];
