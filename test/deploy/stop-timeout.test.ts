// One stop timeout, derived from api.timeout by one function (shutdown.ts stopTimeoutMs), and stated
// the same in every file that gives or promises it: the systemd unit, the Kubernetes Deployment,
// the compose file, docs/operations.md, docs/deploy.md and the daemon's own `stopping` line.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { handleSignals, type Daemon } from '../../src/daemon/index.js';
import { stopGraceMs, stopTimeoutMs } from '../../src/daemon/runtime/shutdown.js';

const config = parseConfig(readFileSync('config/pipescaler.yaml', 'utf8'), {
  file: 'config/pipescaler.yaml',
  env: { PIPESCALER_KEY_ID: 'k', PIPESCALER_KEY_SECRET: 's' },
});
const S = stopTimeoutMs(config) / 1000;
const read = (file: string) => readFileSync(file, 'utf8');
/** Lines of a file that speak of a stop, without the comment markers, joined. */
const prose = (file: string) => read(file).replace(/\n\s*(#|\/\/)?\s*/g, ' ');

afterEach(() => {
  vi.useRealTimers();
});

describe('the stop timeout', () => {
  it('is api.timeout + 5 s: 35 s at the shipped api.timeout of 30 s', () => {
    expect(config.api.timeoutMs).toBe(30_000);
    expect(S).toBe(35);
    expect(stopTimeoutMs({ api: { timeoutMs: 60_000 } })).toBe(65_000);
    expect(stopTimeoutMs(config)).toBeGreaterThan(stopGraceMs(config));
  });

  it('is what every service manager waits before it SIGKILLs', () => {
    expect(read('config/systemd/pipescaler.service')).toMatch(new RegExp(`^TimeoutStopSec=${S}s$`, 'm'));
    expect(read('config/kubernetes/deployment.yaml')).toMatch(
      new RegExp(`^ +terminationGracePeriodSeconds: ${S}$`, 'm'),
    );
    expect(read('docker-compose.yml')).toMatch(new RegExp(`^ +stop_grace_period: ${S}s$`, 'm'));
  });

  it('is the one stop time docs/operations.md, docs/deploy.md and the files comments state', () => {
    const within = `exits (0 )?within \`?api.timeout\`? \\+ 5 s`;
    expect(prose('docs/operations.md')).toMatch(new RegExp(`${within}, ${S} s at the default`));
    expect(prose('docs/deploy.md')).toMatch(new RegExp(`${within} of a SIGTERM, ${S} s at the default`));
    expect(prose('docs/deploy.md')).toContain(`\`terminationGracePeriodSeconds: ${S}\``);
    expect(prose('docs/deploy.md')).toContain(`\`stop_grace_period\`, both ${S} s`);
    expect(prose('docs/deploy.md')).toContain(`\`systemctl stop\` waits up to ${S} s`);
    for (const file of ['config/systemd/pipescaler.service', 'config/kubernetes/deployment.yaml', 'docker-compose.yml'])
      expect(prose(file), file).toMatch(new RegExp(`${within} \\(${S} s at the default 30 s\\)`));
    // what they said before, each a number of its own
    for (const file of ['README.md', 'docs/operations.md', 'docs/deploy.md', 'src/daemon/README.md'])
      for (const old of ['(15 s)', '16 at most', '35 s at most', 'both 45 s', 'api.timeout` + 15 s'])
        expect(prose(file), `${file}: ${old}`).not.toContain(old);
  });

  it("is what the daemon's stopping line says, and one Ctrl-C delivered twice (npm and the daemon) is one stop", async () => {
    vi.useFakeTimers({ now: 0 });
    const lines: { obj: Record<string, unknown>; msg?: string }[] = [];
    const log = (obj: object, msg?: string) => lines.push({ obj: obj as Record<string, unknown>, msg });
    let stops = 0;
    const daemon = {
      config: () => config,
      stop: () => {
        stops += 1;
        return new Promise<void>(() => {});
      },
    } as unknown as Daemon;
    const exits: number[] = [];
    const off = handleSignals(daemon, {
      logger: { info: log, warn: log, error: log, debug: log },
      exit: (code) => exits.push(code),
    });
    try {
      process.emit('SIGINT', 'SIGINT');
      process.emit('SIGINT', 'SIGINT');
      expect(stops).toBe(1);
      expect(exits).toEqual([]);
      expect(lines).toEqual([
        {
          obj: { signal: 'SIGINT', stopTimeoutMs: S * 1000 },
          msg: `stopping: finishing in-flight requests; the daemon exits within ${S} s`,
        },
      ]);
      // a second Ctrl-C, a moment later, forces the exit
      vi.advanceTimersByTime(1_000);
      process.emit('SIGINT', 'SIGINT');
      expect(exits).toEqual([1]);
    } finally {
      off();
    }
  });
});
