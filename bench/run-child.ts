// Runs one scenario function in this fresh process (see child.ts) and sends back its result.
process.once('message', (m: { module: string; args: unknown }) => {
  void (async () => {
    try {
      const mod = (await import(m.module)) as { runOnce(args: unknown): Promise<unknown> };
      const value = await mod.runOnce(m.args);
      process.send!({ ok: true, value }, () => process.exit(0));
    } catch (err) {
      process.send!({ ok: false, error: (err as Error).stack ?? String(err) }, () => process.exit(1));
    }
  })();
});
