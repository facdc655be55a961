// The HTML reports of `simulate --html`, `diff --html` and `plan --html`, opened in a real browser
// (Debian's chromium driven by playwright-core): one chart per pipe and field, no console error,
// nothing fetched from the network, and hovering a change shows its instant and reason; plan's
// tables of lead slots, each with its caption and headers.
// PIPESCALER_UPDATE_DOCS=1 also writes the picture docs/cli.md shows (npm run docs:report).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleText } from './example.js';
import { findTool, requireTool } from '../require-tool.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? 'chromium';
const hasChromium = requireTool(CHROMIUM, 'chromium');

const BIN = 'dist/cli/main.js';

/** What the checks read of the page's elements (the project's lib has no DOM types). */
interface DomElement {
  getAttribute(name: string): string | null;
  readonly textContent: string | null;
}
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-html-'));
const PERIOD = ['--from', '2026-11-23T00:00:00Z', '--to', '2026-11-26T00:00:00Z'];
let browser: Browser;

function run(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, TZ: 'Europe/Berlin' },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: findTool(CHROMIUM) ?? CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Opens a report and records console errors and every request that is not the file itself. */
async function open(file: string): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  const url = pathToFileURL(resolve(file)).href;
  page.on('request', (r) => {
    if (r.url() !== url) requests.push(r.url());
  });
  await page.goto(url);
  return { page, errors, requests };
}

describe.skipIf(!hasChromium)('simulate --html', () => {
  it('renders a chart per pipe and field, and a hover shows the instant and the reason', async () => {
    const file = join(dir, 'simulate.html');
    const r = run(['simulate', ...PERIOD, '--html', file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`wrote ${file}\n`);
    const html = readFileSync(file, 'utf8');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\//);

    const { page, errors, requests } = await open(file);
    // stream pipes: replicas, cpu and memory; object-storage pipes: concurrency; as simulated
    const charts = await page.$$eval('figure.chart', (els: DomElement[]) =>
      els.map((e) => `${e.getAttribute('data-pipe')}/${e.getAttribute('data-field')}`),
    );
    expect(charts).toContain('orders-events/replicas');
    expect(charts).toContain('orders-events/replicaCpuMillicores');
    expect(charts).toContain('orders-events/replicaMemoryGb');
    expect(charts).toContain('nightly-s3/concurrency');
    expect(new Set(charts).size).toBe(charts.length);
    expect(await page.locator('figure.chart svg path.head').count()).toBe(charts.length);
    expect(
      await page.locator('figure[data-pipe="orders-events"][data-field="replicas"] rect.window').count(),
    ).toBeGreaterThan(0);
    expect(await page.locator('figure[data-pipe="payments-msk"][data-field="replicas"] line.bound').count()).toBe(2);
    // A metric policy simulated without --metrics: the band its metric moves replicas within, the
    // baseline's 1..4 at night and business hours' 3..10 (Berlin 08-20 is 07-19 UTC), Mon to Wed.
    const band = page.locator('figure[data-pipe="orders-lag"][data-field="replicas"] rect.metric-band');
    const spans = await band.evaluateAll((els: DomElement[]) =>
      els.map((e) => `${e.getAttribute('data-min')}..${e.getAttribute('data-max')} ${e.textContent}`),
    );
    const night = '1..4 metric bounds 1..4 (baseline)';
    const day = '3..10 metric bounds 3..10 (business-hours)';
    expect(spans).toEqual([night, day, night, day, night, day, night]);
    const [x, width] = await band
      .nth(1)
      .evaluate((e: DomElement) => [Number(e.getAttribute('x')), Number(e.getAttribute('width'))]);
    const hour = (960 - 56 - 12) / 72; // the plot's width (the SVG's less its margins) over the 72 hours
    expect(x).toBeCloseTo(56 + 7 * hour, 0);
    expect(width).toBeCloseTo(12 * hour, 0);
    expect(await page.locator('figure[data-pipe="orders-events"] rect.metric-band').count()).toBe(0);
    expect(await page.locator('.legend').textContent()).toContain('metric bounds');

    const marker = page.locator('figure[data-pipe="orders-events"][data-field="replicas"] circle.change').first();
    await marker.hover();
    const tip = page.locator('#tip');
    await expect.poll(() => tip.isVisible()).toBe(true);
    const text = await tip.textContent();
    // lead time auto: the first step goes the minute before the window opens, and says so
    expect(text).toMatch(/^2026-11-23 06:59 UTC \/ Mon 2026-11-23 07:59 Europe\/Berlin/);
    expect(text).toMatch(
      /up replicas 2 -> 4 \[baseline, ahead of business-hours at 2026-11-23 07:00 UTC \/ Mon 2026-11-23 08:00 Europe\/Berlin\] \| baseline: /,
    );
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    if (process.env.PIPESCALER_UPDATE_DOCS === '1')
      await page.screenshot({ path: 'docs/simulate-report.png', fullPage: false });
    await page.close();
  }, 60_000);
});

describe.skipIf(!hasChromium)('reads without hovering', () => {
  it('value ticks on the y-axis, the time zone named under the time axis (one per pipe), skipped pipes with their reason', async () => {
    const file = join(dir, 'read.html');
    expect(run(['simulate', ...PERIOD, '--html', file]).code).toBe(0);
    const { page, errors } = await open(file);
    const texts = (selector: string) => page.locator(selector).allTextContents();
    // each field's range with round steps between its ends
    expect(await texts('figure[data-pipe="orders-events"][data-field="replicas"] text.ytick')).toEqual([
      '1',
      '2',
      '4',
      '6',
      '8',
      '10',
    ]);
    expect(await texts('figure[data-pipe="orders-events"][data-field="replicaCpuMillicores"] text.ytick')).toEqual([
      '125',
      '500',
      '1000',
      '1500',
      '2000',
    ]);
    expect(await texts('figure[data-pipe="nightly-s3"][data-field="concurrency"] text.ytick')).toEqual([
      '0',
      '10',
      '20',
      '30',
      '34',
    ]);
    // and on screen: the labels of a chart do not overlap
    const boxes = await page
      .locator('figure[data-pipe="orders-events"][data-field="replicas"] text.ytick')
      .evaluateAll((els: { getBoundingClientRect(): { top: number; bottom: number } }[]) =>
        els.map((e) => e.getBoundingClientRect()),
      );
    for (let i = 1; i < boxes.length; i++) expect(boxes[i]!.bottom).toBeLessThanOrEqual(boxes[i - 1]!.top + 1);
    // the time axis says its zone, the same on every chart of the pipe
    const zones = await texts('figure[data-pipe="orders-events"] text.axis-zone');
    expect(zones).toHaveLength(3);
    expect(new Set(zones)).toEqual(new Set(['times in Europe/Berlin (UTC+01:00)']));
    expect(
      await page.locator('figure[data-pipe="orders-events"][data-field="replicas"] text.xtick').first().textContent(),
    ).toBe('Mon 23 Nov 01:00');
    // a skipped pipe is greyed with its reason, as simulate's text gives it
    expect(await texts('figure[data-pipe="legacy-events"] text.skipped-label')).toEqual(
      Array(3).fill('skipped: pipe_state: pipe is Stopped: only Running, Degraded, Provisioning pipes are scaled'),
    );
    expect(await texts('figure[data-pipe="users-cdc"] text.skipped-label')).toEqual([
      'skipped: kind: database pipes are scaled service-wide',
    ]);
    expect(await page.locator('figure[data-pipe="orders-events"] text.skipped-label').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.locator('section[data-pipe="legacy-events"]').screenshot({ path: join(dir, 'skipped.png') });
    if (process.env.PIPESCALER_SCREENSHOTS) {
      await page
        .locator('section[data-pipe="orders-events"]')
        .screenshot({ path: join(process.env.PIPESCALER_SCREENSHOTS, 'orders-events.png') });
      await page
        .locator('section[data-pipe="legacy-events"]')
        .screenshot({ path: join(process.env.PIPESCALER_SCREENSHOTS, 'legacy-events.png') });
    }
    await page.close();
  }, 60_000);
});

describe.skipIf(!hasChromium)('diff --html', () => {
  it('overlays base and head on the charts of the pipes that differ', async () => {
    copyFileSync('config/cloud.yaml', join(dir, 'cloud.yaml'));
    const head = join(dir, 'earlier.yaml');
    writeFileSync(
      head,
      exampleText().replace('start: "08:00"            # quote', 'start: "07:00"            # quote'),
    );
    const file = join(dir, 'diff.html');
    const r = run(['diff', 'config/pipescaler.yaml', head, ...PERIOD, '--html', file]);
    expect(r.code).toBe(2);
    const { page, errors } = await open(file);
    const chart = page.locator('figure[data-pipe="orders-events"][data-field="replicas"]');
    expect(await chart.locator('path.base').count()).toBe(1);
    expect(await chart.locator('path.head').count()).toBe(1);
    await chart.locator('circle.head-change').first().hover();
    await expect.poll(() => page.locator('#tip').textContent()).toMatch(/^head: 2026-11-23 05:59 UTC/);
    // the capacity totals and each pipe's capacity line, as the text output has them
    const text = run(['diff', 'config/pipescaler.yaml', head, ...PERIOD]).stdout.split('\n');
    // under the headline and the read line, to the blank line (the lead plans' rows included)
    const table = text.slice(3, text.indexOf('', 3)).map((l) => l.trim().split(/\s{2,}/));
    const rows = await page
      .locator('table.capacity tr')
      .evaluateAll((trs: { textContent: string | null; children: ArrayLike<{ textContent: string | null }> }[]) =>
        trs.map((tr) => Array.from(tr.children, (c) => c.textContent ?? '')),
      );
    expect(rows).toEqual(table);
    const line = text[text.findIndex((l) => l.startsWith('orders-events: ')) + 1]!.trim();
    expect(await page.locator('section[data-pipe="orders-events"] .capacity-line').textContent()).toBe(line);
    expect(await page.locator('section[data-pipe="legacy-events"] text.skipped-label').count()).toBe(3);
    if (process.env.PIPESCALER_SCREENSHOTS)
      await page.screenshot({ path: join(process.env.PIPESCALER_SCREENSHOTS, 'diff.png') });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});

describe.skipIf(!hasChromium)('plan --html', () => {
  it("renders each key's lead slots by boundary, with the capacity spent early and short and their totals", async () => {
    const file = join(dir, 'plan.html');
    const r = run(['plan', '--offline', '--at', '2026-11-23T06:30:00Z', '--html', file]);
    expect(r.code).toBe(0);
    const { page, errors, requests } = await open(file);
    expect(await page.locator('h1').textContent()).toBe('pipescaler plan');
    // every table says what it holds, and its headers what they head
    const tables = page.locator('table.report');
    expect(await tables.count()).toBeGreaterThanOrEqual(3);
    expect(await page.locator('table.report:not(:has(caption))').count()).toBe(0);
    expect(await page.locator('table.report th:not([scope])').count()).toBe(0);
    // the demo key: orders-events' slot for business-hours (Berlin 08:00, 07:00Z) and its boundary's total
    const key = page.locator('section.key[data-key="default"]');
    const slot = key.locator('tr[data-pipe="orders-events"][data-boundary="2026-11-23T07:00:00.000Z"]');
    expect(await slot.locator('th').textContent()).toBe('orders-events');
    expect(await slot.isVisible()).toBe(true);
    const total = key.locator('tr.total[data-boundary="2026-11-23T07:00:00.000Z"]');
    expect(await total.locator('th').textContent()).toMatch(/^total: \d+ scale-ups$/);
    expect(await page.locator('table.spent-total tfoot th').textContent()).toBe('all keys');
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    if (process.env.PIPESCALER_SCREENSHOTS)
      await page.screenshot({ path: join(process.env.PIPESCALER_SCREENSHOTS, 'plan.png'), fullPage: true });
    await page.close();
  }, 60_000);
});
