// A small client for the Prometheus HTTP API: instant queries (the daemon, `plan`), range queries
// (a metric's history for its forecast) and /api/v1/parse_query (`validate`). One undici Pool per server. Credentials come from their files
// at each request (a rotated token is picked up) and never appear in an error message.
import { readFile } from 'node:fs/promises';
import { Pool } from 'undici';
import { parseSampleValue, type Sample } from '../policy/index.js';
import type { PrometheusConfig } from '../config/index.js';
import { pairKey, PART_LABEL, withSampleTimes } from './sample-time.js';

/** One series of a range query's answer. */
export interface RangeSeries {
  readonly labels: Record<string, string>;
  readonly points: readonly (readonly [number, number])[];
}

export class PrometheusError extends Error {
  override readonly name = 'PrometheusError';
}

interface Envelope {
  status?: string;
  error?: string;
  errorType?: string;
  data?: { resultType?: string; result?: unknown };
}

export class PrometheusClient {
  private readonly pool: Pool;
  private readonly base: URL;

  constructor(private readonly cfg: PrometheusConfig) {
    this.base = new URL(cfg.url.endsWith('/') ? cfg.url : `${cfg.url}/`);
    this.pool = new Pool(this.base.origin, {
      connections: 4,
      connectTimeout: cfg.timeoutMs,
      headersTimeout: cfg.timeoutMs,
      bodyTimeout: cfg.timeoutMs,
    });
  }

  get url(): string {
    return this.cfg.url;
  }

  /**
   * The samples of an instant query: a vector's, or a scalar's as one sample without labels.
   * lookbackMs goes as lookback_delta: servers that know it drop series whose newest sample is
   * older (a stalled exporter then gives no sample); others keep their own lookback (5m).
   */
  async query(query: string, lookbackMs?: number): Promise<Sample[]> {
    return (await this.instant(query, lookbackMs)).map(({ labels, value }) => ({ labels, value }));
  }

  /** The samples with the evaluation time Prometheus answered each at (seconds, its own clock). */
  private async instant(query: string, lookbackMs?: number): Promise<(Sample & { evaluatedAt: number })[]> {
    const form: Record<string, string> = { query };
    if (lookbackMs !== undefined) form.lookback_delta = `${Math.max(1, Math.round(lookbackMs / 1000))}s`;
    const data = await this.call('api/v1/query', form);
    const result = data?.result;
    switch (data?.resultType) {
      case 'vector':
        if (!Array.isArray(result)) throw new PrometheusError('the answer has no result list');
        return result.map((s: { metric?: Record<string, string>; value?: [number, string] }) => ({
          labels: s.metric ?? {},
          value: parseSampleValue(String(s.value?.[1])),
          evaluatedAt: Number(s.value?.[0]),
        }));
      case 'scalar':
        return [
          {
            labels: {},
            value: parseSampleValue((result as [number, string])[1]),
            evaluatedAt: (result as [number, string])[0],
          },
        ];
      default:
        throw new PrometheusError(
          `the query returns a ${data?.resultType ?? 'missing'} result; a metric needs an instant vector or a scalar`,
        );
    }
  }

  /**
   * The samples of `query` with each one's age (ms, by Prometheus' own clock: the evaluation time
   * minus the sample's time) where PromQL keeps the time (a selector, or an aggregation of
   * selectors: sample-time.ts), in one request. A query the combined form is refused for is asked
   * again as it is, for its own error (or its samples, without their ages).
   */
  async queryWithAges(query: string, lookbackMs?: number): Promise<(Sample & { ageMs?: number })[]> {
    const combined = withSampleTimes(query);
    if (combined === null) return this.query(query, lookbackMs);
    let all: (Sample & { evaluatedAt: number })[];
    try {
      all = await this.instant(combined, lookbackMs);
    } catch (err) {
      if (err instanceof PrometheusError && err.message.startsWith('Prometheus refused the query'))
        return this.query(query, lookbackMs);
      throw err;
    }
    const ages = new Map<string, number>();
    const values: Sample[] = [];
    for (const s of all) {
      const { [PART_LABEL]: part, ...labels } = s.labels;
      if (part === 'time') ages.set(pairKey(labels), (s.evaluatedAt - s.value) * 1000);
      else if (part === 'value') values.push({ labels, value: s.value });
    }
    return values.map((v) => {
      const ageMs = ages.get(pairKey(v.labels));
      return ageMs === undefined || !Number.isFinite(ageMs) ? v : { ...v, ageMs: Math.max(0, Math.round(ageMs)) };
    });
  }

  /**
   * The series of a range query over [startMs, endMs] every stepMs: labels and (epoch ms, value)
   * points, sorted by time. Values that are not numbers (NaN, Inf) are kept as such.
   */
  async queryRange(query: string, startMs: number, endMs: number, stepMs: number): Promise<RangeSeries[]> {
    const data = await this.call('api/v1/query_range', {
      query,
      start: (startMs / 1000).toFixed(3),
      end: (endMs / 1000).toFixed(3),
      step: `${Math.max(1, Math.round(stepMs / 1000))}s`,
    });
    if (data?.resultType !== 'matrix' || !Array.isArray(data.result)) {
      throw new PrometheusError(`the range query returns a ${data?.resultType ?? 'missing'} result, not a matrix`);
    }
    return data.result.map((s: { metric?: Record<string, string>; values?: [number, string][] }) => ({
      labels: s.metric ?? {},
      points: (Array.isArray(s.values) ? s.values : []).map(
        ([t, v]) => [Math.round(t * 1000), parseSampleValue(v)] as const,
      ),
    }));
  }

  /**
   * null when Prometheus' own parser takes the query, else its message. Servers without
   * /api/v1/parse_query (before 2.45 or so answer 404) parse it by running it once as an instant query.
   */
  async parseQuery(query: string): Promise<string | null> {
    try {
      try {
        await this.call('api/v1/parse_query', { query });
      } catch (err) {
        if (!(err instanceof PrometheusError && err.message.startsWith('Prometheus answered 404'))) throw err;
        await this.call('api/v1/query', { query });
      }
      return null;
    } catch (err) {
      if (err instanceof PrometheusError && err.message.startsWith('Prometheus refused the query')) return err.message;
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private async headers(): Promise<Record<string, string>> {
    const h: Record<string, string> = {
      ...this.cfg.headers,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    try {
      if (this.cfg.bearerTokenFile !== undefined) {
        h.authorization = `Bearer ${(await readFile(this.cfg.bearerTokenFile, 'utf8')).trim()}`;
      } else if (this.cfg.basicAuth !== undefined) {
        const password = (await readFile(this.cfg.basicAuth.passwordFile, 'utf8')).trim();
        h.authorization = `Basic ${Buffer.from(`${this.cfg.basicAuth.username}:${password}`).toString('base64')}`;
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new PrometheusError(`cannot read the Prometheus credentials file (${code})`);
    }
    return h;
  }

  private async call(path: string, form: Record<string, string>): Promise<Envelope['data']> {
    const url = new URL(path, this.base);
    const signal = AbortSignal.timeout(this.cfg.timeoutMs);
    let status: number;
    let text: string;
    try {
      const res = await this.pool.request({
        method: 'POST',
        path: url.pathname,
        headers: await this.headers(),
        body: new URLSearchParams(form).toString(),
        signal,
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      if (err instanceof PrometheusError) throw err;
      if (signal.aborted) throw new PrometheusError(`no answer from Prometheus within ${this.cfg.timeoutMs} ms`);
      const e = err as NodeJS.ErrnoException;
      throw new PrometheusError(`Prometheus unreachable (${e.code ?? e.name})`);
    }
    let body: Envelope;
    try {
      body = JSON.parse(text) as Envelope;
    } catch {
      throw new PrometheusError(`Prometheus answered ${status} without JSON`);
    }
    if (status === 400 || status === 422 || body.errorType === 'bad_data') {
      throw new PrometheusError(`Prometheus refused the query (${status}): ${body.error ?? 'no message'}`);
    }
    if (status < 200 || status >= 300 || body.status !== 'success') {
      throw new PrometheusError(`Prometheus answered ${status}: ${body.error ?? 'no message'}`);
    }
    return body.data;
  }
}
