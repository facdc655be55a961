// Reading the Prometheus text format back, for the tests.

export interface Scrape {
  /** Family name -> TYPE. */
  readonly types: Map<string, string>;
  /** Every sample line's metric name. */
  readonly sampleNames: Set<string>;
  readonly lines: string[];
}

export function parseScrape(text: string): Scrape {
  const types = new Map<string, string>();
  const sampleNames = new Set<string>();
  const lines = text.split('\n');
  for (const line of lines) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    else if (line !== '' && !line.startsWith('#')) sampleNames.add(/^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0]);
  }
  return { types, sampleNames, lines };
}

/** The value of the first sample of `name` whose labels include every pair of `labels`. */
export function sampleValue(scrape: Scrape, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of scrape.lines) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)/.exec(line);
    if (m?.[1] !== name) continue;
    const have = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => have.includes(`${k}="${v}"`))) return Number(m[3]);
  }
  return undefined;
}

export async function scrape(url: string): Promise<{ status: number; contentType: string | null; text: string }> {
  const res = await fetch(`${url}/metrics`);
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}
