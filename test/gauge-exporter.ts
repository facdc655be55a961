// A tiny Prometheus exporter for tests: a node:http server on a free loopback port whose gauge
// values the test sets; /metrics serves them in the text format. Tests point a real Prometheus
// at it (scrape every 1 s) to drive metric policies.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GaugeExporter {
  /** host:port, as a Prometheus scrape target. */
  readonly target: string;
  /** Set a gauge; labels as given. With timestampMs the sample carries that time of its own (as a
   *  federated or pushed sample does): Prometheus keeps it as given, so a series whose time stops
   *  moving stays answerable for its 5-minute lookback while it grows old. */
  set(name: string, labels: Record<string, string>, value: number, timestampMs?: number): void;
  /** Drop one series (it goes stale in Prometheus). */
  remove(name: string, labels: Record<string, string>): void;
  /** /metrics requests served, to wait for a scrape. */
  scrapes(): number;
  close(): Promise<void>;
}

const key = (name: string, labels: Record<string, string>): string => {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k]!.replace(/["\\\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))}"`);
  return parts.length > 0 ? `${name}{${parts.join(',')}}` : name;
};

const format = (v: number): string =>
  Number.isNaN(v) ? 'NaN' : v === Infinity ? '+Inf' : v === -Infinity ? '-Inf' : String(v);

export async function startGaugeExporter(): Promise<GaugeExporter> {
  const series = new Map<string, { name: string; value: number; timestampMs?: number | undefined }>();
  let scrapes = 0;
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    scrapes += 1;
    const names = new Set([...series.values()].map((s) => s.name));
    const lines: string[] = [];
    for (const name of names) {
      lines.push(`# TYPE ${name} gauge`);
      for (const [k, s] of series) {
        if (s.name === name)
          lines.push(`${k} ${format(s.value)}${s.timestampMs === undefined ? '' : ` ${Math.round(s.timestampMs)}`}`);
      }
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(`${lines.join('\n')}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    target: `127.0.0.1:${port}`,
    set: (name, labels, value, timestampMs) => void series.set(key(name, labels), { name, value, timestampMs }),
    remove: (name, labels) => void series.delete(key(name, labels)),
    scrapes: () => scrapes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
