// The Kubernetes base (config/kubernetes), rendered as kustomize renders it (its resources, the
// generated ConfigMap, the common labels and the image) and checked against Kubernetes' own
// schemas (kubernetes-models; the Prometheus Operator's CRDs from @kubernetes-models/
// prometheus-operator), then for what a platform team expects of it: two replicas, probes on the
// telemetry port, resources, a non-root read-only container, the config from the ConfigMap and the
// key from the Secret (mounted whole, so updates reach the pods), a PodDisruptionBudget, a Service
// and a ServiceMonitor that find the pods, and the alerts of config/prometheus/rules.yml as they
// are (the generated files current).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { ConfigMap, Service, ServiceAccount } from 'kubernetes-models/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { stopTimeoutMs } from '../../src/daemon/runtime/shutdown.js';

const BASE = 'config/kubernetes';
const read = (file: string) => readFileSync(join(BASE, file), 'utf8');

interface Kustomization {
  labels: { pairs: Record<string, string> }[];
  resources: string[];
  configMapGenerator: { name: string; files: string[]; options?: { disableNameSuffixHash?: boolean } }[];
  images: { name: string; newName: string; newTag: string }[];
}
const kustomization = parse(read('kustomization.yaml')) as Kustomization;

type Obj = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> } } & Record<
  string,
  unknown
>;

/** What `kubectl apply -k config/kubernetes` sends, for the features the base uses. */
function render(): Obj[] {
  const objects: Obj[] = kustomization.resources.flatMap((file) =>
    parseAllDocuments(read(file)).map((d) => d.toJS() as Obj),
  );
  for (const gen of kustomization.configMapGenerator) {
    expect(gen.options?.disableNameSuffixHash, 'a fixed name, so edits reach the running pods').toBe(true);
    objects.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: gen.name },
      data: Object.fromEntries(gen.files.map((f) => [posix.basename(f), read(f)])),
    });
  }
  const labels = Object.assign({}, ...kustomization.labels.map((l) => l.pairs)) as Record<string, string>;
  for (const o of objects) o.metadata.labels = { ...o.metadata.labels, ...labels };
  for (const o of objects.filter((x) => x.kind === 'Deployment')) {
    for (const c of (o as unknown as DeploymentShape).spec.template.spec.containers) {
      const image = kustomization.images.find((i) => i.name === c.image);
      if (image) c.image = `${image.newName}:${image.newTag}`;
    }
  }
  return objects;
}

/** Kubernetes' schema of each kind; validate() throws naming the field. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ServiceAccount': ServiceAccount,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

interface Container {
  name: string;
  image: string;
  args: string[];
  env: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  ports: { name: string; containerPort: number }[];
  startupProbe: { httpGet: { path: string; port: string } };
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: Record<string, unknown> & { capabilities: { drop: string[] } };
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[];
}
interface DeploymentShape {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        securityContext: Record<string, unknown>;
        automountServiceAccountToken: boolean;
        terminationGracePeriodSeconds: number;
        containers: Container[];
        volumes: {
          name: string;
          configMap?: { name: string };
          secret?: { secretName: string; items: { key: string; path: string }[] };
        }[];
      };
    };
  };
}

const objects = render();
/** The one object of a kind (each test casts it to the fields it reads). */
function one(kind: string): Obj {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
}
const deployment = one('Deployment') as unknown as DeploymentShape & Obj;
const pod = deployment.spec.template;
const container = pod.spec.containers[0]!;
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

describe('the Kubernetes base', () => {
  it("is valid against Kubernetes' and the Prometheus Operator's schemas, every object of it", () => {
    expect(objects.map((o) => o.kind).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'PodDisruptionBudget',
      'PrometheusRule',
      'Service',
      'ServiceAccount',
      'ServiceMonitor',
    ]);
    for (const o of objects) {
      const Model = MODELS[`${o.apiVersion}/${o.kind}`];
      expect(Model, `${o.apiVersion} ${o.kind}`).toBeDefined();
      expect(() => new Model!(o as never).validate(), `${o.kind} ${o.metadata.name}`).not.toThrow();
    }
    // the schemas are really applied: a wrong type is refused
    const broken = structuredClone(deployment) as unknown as DeploymentShape;
    (broken.spec.template.spec.containers[0]!.ports[0] as { containerPort: unknown }).containerPort = 'x';
    expect(() => new Deployment(broken as never).validate()).toThrow(/containerPort must be integer/);
  });

  it('runs two replicas with /healthz and /readyz probes on the telemetry port, and resources', () => {
    expect(deployment.spec.replicas).toBe(2);
    expect(selects(deployment.spec.selector.matchLabels, pod.metadata.labels)).toBe(true);
    const port = container.ports.find((p) => p.name === 'metrics')!;
    expect(port.containerPort).toBe(9464);
    expect(container.env.find((e) => e.name === 'PIPESCALER_TELEMETRY_LISTEN')?.value).toBe('0.0.0.0:9464');
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(Object.keys(container.resources.requests).sort()).toEqual(['cpu', 'memory']);
    expect(container.resources.limits.memory).toBeDefined();
    expect(container.image).toBe('pipescaler:0.1.0');
  });

  it('runs as a non-root user on a read-only file system with no privileges and no API token', () => {
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.spec.securityContext.runAsUser).not.toBe(0);
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
    });
    expect(container.securityContext.capabilities.drop).toEqual(['ALL']);
    expect(pod.spec.automountServiceAccountToken).toBe(false);
  });

  it('takes its config from the ConfigMap and its key from the Secret, mounted whole so updates reload', () => {
    expect(container.args).toEqual(['run', '/etc/pipescaler/pipescaler.yaml']);
    const mount = (volume: string) => container.volumeMounts.find((m) => m.name === volume)!;
    const configVolume = pod.spec.volumes.find((v) => v.configMap)!;
    const keyVolume = pod.spec.volumes.find((v) => v.secret)!;
    expect(configVolume.configMap!.name).toBe('pipescaler-config');
    expect((one('ConfigMap') as unknown as { data: Record<string, string> } & Obj).metadata.name).toBe(
      'pipescaler-config',
    );
    expect(keyVolume.secret!.secretName).toBe('pipescaler-api-key');
    expect(mount(configVolume.name).mountPath).toBe('/etc/pipescaler');
    // subPath mounts never see an update
    expect(container.volumeMounts.filter((m) => m.subPath !== undefined)).toEqual([]);
    expect(container.volumeMounts.every((m) => m.readOnly === true || m.mountPath === '/tmp')).toBe(true);
    const keyId = container.env.find((e) => e.name === 'PIPESCALER_KEY_ID')!;
    expect(keyId.valueFrom?.secretKeyRef).toEqual({ name: 'pipescaler-api-key', key: 'key-id' });

    // The config in the ConfigMap loads with the Deployment's environment and the Secret's files
    // where the pod mounts them, and starts in dryRun.
    const env = Object.fromEntries(container.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
    const secretFiles = new Map(
      keyVolume.secret!.items.map((i) => [posix.join(mount(keyVolume.name).mountPath, i.path), `secret of ${i.key}`]),
    );
    const text = (one('ConfigMap') as unknown as { data: Record<string, string> } & Obj).data['pipescaler.yaml']!;
    const config = parseConfig(text, {
      file: '/etc/pipescaler/pipescaler.yaml',
      env: { ...env, PIPESCALER_KEY_ID: 'the-key-id' },
      readFile: (path) => {
        const secret = secretFiles.get(path);
        if (secret === undefined) throw Object.assign(new Error(path), { code: 'ENOENT' });
        return secret;
      },
    });
    expect(config.api.keys.default).toMatchObject({ keyId: 'the-key-id', keySecret: 'secret of key-secret' });
    expect(config.api.baseUrl).toBe(env.PIPESCALER_API_URL);
    expect(config.dryRun).toBe(true);
    expect(config.telemetry.listen).toBe('0.0.0.0:9464');
    // SIGTERM: in-flight requests get the config's api.timeout and a second, then everything
    // closes and the process exits, before the kubelet's SIGKILL
    expect(pod.spec.terminationGracePeriodSeconds * 1000).toBe(stopTimeoutMs(config));
  });

  it('keeps one replica through a drain, and scrapes every replica through the Service', () => {
    const pdb = one('PodDisruptionBudget') as unknown as {
      spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } };
    } & Obj;
    expect(pdb.spec.minAvailable).toBe(1);
    expect(selects(pdb.spec.selector.matchLabels, pod.metadata.labels)).toBe(true);
    const service = one('Service') as unknown as {
      spec: { selector: Record<string, string>; ports: { name: string; targetPort: string }[] };
    } & Obj;
    expect(selects(service.spec.selector, pod.metadata.labels)).toBe(true);
    expect(service.spec.ports.map((p) => [p.name, p.targetPort])).toEqual([['metrics', 'metrics']]);
    const monitor = one('ServiceMonitor') as unknown as {
      spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string; path: string }[] };
    } & Obj;
    expect(selects(monitor.spec.selector.matchLabels, service.metadata.labels!)).toBe(true);
    expect(monitor.spec.endpoints.map((e) => [e.port, e.path])).toEqual([['metrics', '/metrics']]);
  });

  it("alerts with config/prometheus/rules.yml's groups as they are, and the generated files are current", () => {
    const rule = one('PrometheusRule') as unknown as { spec: { groups: unknown } } & Obj;
    expect(rule.spec.groups).toEqual(
      (parse(readFileSync('config/prometheus/rules.yml', 'utf8')) as { groups: unknown }).groups,
    );
    const check = spawnSync(process.execPath, ['.ci/generate-kubernetes.mjs', '--check'], { encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
