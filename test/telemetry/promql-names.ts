// The metric names a PromQL expression reads, for checking dashboards and rules against a scrape.

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'and',
  'or',
  'unless',
  'atan2',
  'inf',
  'nan',
]);

export function metricNamesIn(expr: string): Set<string> {
  const names = new Set<string>();
  // Grafana template queries: label_values(metric, label) reads `metric` only.
  for (const m of expr.matchAll(/label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)/g)) names.add(m[1]!);
  const stripped = expr
    .replace(/label_values\([^)]*\)/g, ' ')
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ') // string literals
    .replace(/\$\{?\w+\}?/g, ' ') // Grafana variables ($pipe, $__rate_interval)
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // label lists
    .replace(/(?<![a-zA-Z0-9_:])\d[0-9a-zA-Z.]*/g, ' '); // numbers and durations (0.95, 15m, 1h30m)
  for (const m of stripped.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const [, name, call] = m;
    if (call !== undefined || KEYWORDS.has(name!.toLowerCase())) continue; // a function, or a keyword
    names.add(name!);
  }
  return names;
}

/** Every `expr` (and template query) of a Grafana dashboard, rows and nested panels included. */
export function dashboardExpressions(dashboard: unknown): string[] {
  const out: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(walk);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'expr' && typeof value === 'string') out.push(value);
      else if (key === 'query' && typeof value === 'string' && value.includes('(')) out.push(value);
      else walk(value);
    }
  };
  walk(dashboard);
  return out;
}

/** Grafana's substitution of a dashboard's variables, as a test gives them (longest names first,
 *  so $__rate_interval is not read as $__r...). Template queries (label_values) are left out. */
export function substituteVariables(expr: string, vars: Readonly<Record<string, string>>): string {
  let out = expr;
  for (const name of Object.keys(vars).sort((a, b) => b.length - a.length)) {
    out = out.replaceAll(`\${${name}}`, vars[name]!).replaceAll(`$${name}`, vars[name]!);
  }
  return out;
}

/** Variables for parsing only: any value of the right shape. */
export const PARSE_VARIABLES: Readonly<Record<string, string>> = {
  __rate_interval: '1m',
  __interval: '1m',
  __range: '1h',
  job: '.*',
  instance: '.*',
  policy: '.*',
  pipe: '.*',
  DS_PROMETHEUS: 'prometheus',
};
