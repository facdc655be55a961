// `plan --html` (src/cli/plan-report.ts): each key's lead slots by boundary with the capacity each
// is expected to spend early and short, totals per boundary, key and page; names from the config
// escaped. Its figures, the text's `early` row, --json's slots, diff's and a verdict's are one.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { capacityLine } from '../../src/cli/diff-output.js';
import { renderPlanReport } from '../../src/cli/plan-report.js';
import { formatPlan } from '../../src/cli/policy-output.js';
import { verdictText } from '../../src/daemon/outcomes/verdict-text.js';
import {
  describeMinutes,
  diffConfigs,
  fieldsOfPipe,
  formatMinutes,
  judgeVerdict,
  plan,
  verdictCapacity,
  verdictDue,
  windowStartsIn,
  type PlanEntry,
} from '../../src/policy/index.js';
import { at, oneKeyConfig, salePolicy, view } from '../policy/build.js';
import { runCli, uniquePrefix } from '../daemon/helpers.js';

const MIN = 60_000;
const B = at('2026-11-23T09:00:00Z');
const AT = B - 20 * MIN;
// names a config may give a key and a policy (free strings, unlike pipe and window names)
const KEY = 'team <b>"ops"</b> & co';
const POLICY = "sale <script>alert('x')</script>";

const config = oneKeyConfig({ names: ['orders', 'payments'], key: KEY, policyName: POLICY, policy: salePolicy() });
const views = { orders: view(), payments: view() };

/** The cells of the page's rows whose attributes match `attrs` (a regex source), in order. */
function rows(html: string, attrs: string): string[][] {
  return [...html.matchAll(new RegExp(`<tr${attrs}>(.*?)</tr>`, 'g'))].map((m) =>
    [...m[1]!.matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/g)].map((c) => c[1]!),
  );
}

describe('plan --html: the page', () => {
  const entries = plan(config, views, AT);
  const html = renderPlanReport(entries, `test.yaml at ${new Date(AT).toISOString()}`);

  it('escapes every name from the config: nothing of them is markup', () => {
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<b>"ops"');
    expect(html).toContain('team &#60;b&#62;&#34;ops&#34;&#60;/b&#62; &#38; co');
    expect(html).toContain('sale &#60;script&#62;alert(&#39;x&#39;)&#60;/script&#62;');
    // the page's only script is none: plan has nothing to hover
    expect(html).not.toMatch(/<script/);
    expect(html).toMatch(/^<!doctype html><html lang="en"><head><meta charset="utf-8"><title>pipescaler plan<\/title>/);
  });

  it("each slot's figures, its boundary's total, the key's and the page's", () => {
    const boundary = new Date(B).toISOString();
    const figures = (e: PlanEntry): string[] => {
      const c = e.leadCapacity!;
      // replica, core, GB minutes early, then short (no slot-minutes: no object storage pipe)
      return [
        c.early.replicaMinutes,
        c.early.coreMinutes,
        c.early.gbMinutes,
        c.short.replicaMinutes,
        c.short.coreMinutes,
        c.short.gbMinutes,
      ].map(formatMinutes);
    };
    for (const e of entries) {
      const [row] = rows(html, ` data-pipe="${e.pipe.name}" data-boundary="${boundary}"`);
      expect(row?.[0]).toBe(e.pipe.name);
      expect(row?.slice(6)).toEqual(figures(e));
      expect(e.leadCapacity!.early.replicaMinutes).toBeGreaterThan(0);
    }
    const total = (u: 'replicaMinutes' | 'coreMinutes' | 'gbMinutes') =>
      formatMinutes(entries.reduce((t, e) => t + e.leadCapacity!.early[u], 0));
    const sums = [total('replicaMinutes'), total('coreMinutes'), total('gbMinutes'), '0', '0', '0'];
    expect(rows(html, ` class="total" data-boundary="${boundary}"`)).toEqual([
      ['total: 2 scale-ups', '', '', '', '', '', ...sums],
    ]);
    // the page's total above the keys, then each key's under its slots
    expect(rows(html, ' class="total"[^>]*')).toEqual([
      ['all keys', '2', '1', ...sums],
      ['total: 2 scale-ups', '', '', '', '', '', ...sums],
      ['key total: 2 scale-ups, 1 boundary', '', '', '', '', '', ...sums],
    ]);
    expect(html).toContain('<th scope="col" class="num">replica-min early</th>');
  });

  it('a plan without lead slots says so', () => {
    const after = plan(config, views, B + 60 * MIN);
    expect(renderPlanReport(after, 'x')).toContain('No lead slot in the plan');
  });
});

describe('one figure: plan text, diff and the verdict of the same boundary', () => {
  it('say the same capacity early for a pipe confirmed when the plan expected it in force', () => {
    const [e] = plan(config, views, AT);
    const c = e!.leadCapacity!;
    const slot = e!.leadSlot!;
    const text = formatPlan(AT, [e!], {});
    expect(text).toContain(`early    ${describeMinutes(c.early)} early expected`);

    const side = { config, views, changes: [] };
    const d = diffConfigs(side, side, AT, B + 60 * MIN).pipes.find((p) => p.pipe === 'orders')!;
    expect(d.spent.head).toEqual(c);
    expect(capacityLine(d)).toContain(
      `replica-min early ${c.early.replicaMinutes.toFixed(1)} -> ${c.early.replicaMinutes.toFixed(1)} (0.0)`,
    );

    const p = config.policies[POLICY]!;
    const [start] = windowStartsIn(p, {}, fieldsOfPipe(config.pipes[0]!, p, 'stream'), B - 1, B);
    const due = verdictDue(start!, 10 * MIN);
    const judged = judgeVerdict(due, { values: due.target, at: slot.start + slot.actuationMs }, B)!;
    const spent = verdictCapacity(due, judged)!;
    expect(spent).toEqual(c);
    expect(verdictText({ ...due, ...judged, ...spent })).toMatch(
      new RegExp(`^at target by the boundary, ${describeMinutes(c.early)} early: `),
    );
  });
});

describe('pipescaler plan --html', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pipescaler-plan-html-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the page, whose figures are those of plan --json', async () => {
    const file = join(dir, 'plan.html');
    const env = { PIPESCALER_REDIS_PREFIX: uniquePrefix('plan-html') };
    const args = ['plan', '--offline', '--at', '2026-11-25T06:30:00Z'];
    const r = await runCli(env, [...args, '--html', file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`wrote ${file}\n`);
    const html = readFileSync(file, 'utf8');
    expect(html).not.toMatch(/<script|<link|https?:\/\//);
    const json = JSON.parse((await runCli(env, [...args, '--json'])).stdout) as {
      pipe: string;
      leadSlots: { boundary: string; early: Record<string, number>; short: Record<string, number> }[];
    }[];
    const orders = json.find((p) => p.pipe === 'orders-events')!;
    expect(orders.leadSlots.length).toBeGreaterThan(0);
    for (const s of orders.leadSlots) {
      const [row] = rows(html, ` data-pipe="orders-events" data-boundary="${s.boundary}"`);
      // stream and object storage pipes on the key: replica, core, GB, slot minutes early, then short
      const units = ['replicaMinutes', 'coreMinutes', 'gbMinutes', 'slotMinutes'];
      expect(row?.slice(6)).toEqual([
        ...units.map((u) => formatMinutes(s.early[u]!)),
        ...units.map((u) => formatMinutes(s.short[u]!)),
      ]);
    }
  }, 60_000);
});
