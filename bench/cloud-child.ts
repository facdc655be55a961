// The embedded cloud as a child process of the bench (see child.ts).
import { startCloud, type EmbeddedCloud, type Fixtures } from '../src/cloud/index.js';

let cloud: EmbeddedCloud | undefined;

process.on(
  'message',
  (m: {
    cmd: string;
    fixtures?: string | Fixtures;
    rateLimit?: { requests: number; perMs: number } | false;
    propagation?: Parameters<EmbeddedCloud['setPropagation']>[0];
    ids?: string[];
  }) => {
    void (async () => {
      try {
        if (m.cmd === 'start') {
          cloud = await startCloud({ fixtures: m.fixtures!, rateLimit: m.rateLimit ?? false });
          process.send!({ ok: true, value: cloud.url });
        } else if (m.cmd === 'stats') {
          process.send!({ ok: true, value: cloud!.stats() });
        } else if (m.cmd === 'setPropagation') {
          cloud!.setPropagation(m.propagation ?? {});
          process.send!({ ok: true });
        } else if (m.cmd === 'replicas') {
          // What the platform holds now (changes whose delay has passed applied), read without a
          // request, and the replicas of the changes still on their way (effectiveAt null: never).
          const c = cloud!;
          process.send!({
            ok: true,
            value: (m.ids ?? []).map((id) => ({
              replicas: c.store.pipe(id)?.scaling.replicas ?? null,
              pending: c.store
                .pendingChanges(id)
                .flatMap((p) =>
                  p.values.replicas === undefined ? [] : [{ replicas: p.values.replicas, effectiveAt: p.effectiveAt }],
                ),
            })),
          });
        } else if (m.cmd === 'resetStats') {
          cloud!.resetStats();
          process.send!({ ok: true });
        } else if (m.cmd === 'close') {
          await cloud?.close();
          process.send!({ ok: true });
          process.exit(0);
        }
      } catch (err) {
        process.send!({ ok: false, error: (err as Error).message });
      }
    })();
  },
);
process.on('disconnect', () => process.exit(0));
