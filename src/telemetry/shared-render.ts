// One render of /metrics for every scrape that wants it at about the same time. A render starts on
// the next turn of the event loop (setImmediate), so every scrape read in the same turn joins it,
// and a scrape that comes while it is under way waits for it too. A scrape that comes within
// `reuseMs` of the end of the last render is answered with it, unless its connection was already
// answered with that render: a burst of scrapes (each on its own connection) costs one or two
// renders, while a scraper that asks again on its connection, as Prometheus does every interval,
// always gets a render newer than the one it had.
// The text is encoded once into a Buffer every response writes as is (200 responses of a 5 MB
// string were 200 encodings of it in memory at once), and gzipped at most once (in zlib's thread
// pool, off the event loop) for the scrapers that ask for it.
import { promisify } from 'node:util';
import { gzip as gzipCb, constants } from 'node:zlib';

const gzipAsync = promisify(gzipCb);

export interface Rendered {
  /** The exposition text, UTF-8. */
  readonly body: Buffer;
  /** The same, gzipped (made at the first call, then shared). */
  gzip(): Promise<Buffer>;
  /** Epoch ms at which the render finished. */
  readonly at: number;
}

export interface SharedRenderOptions {
  /** How long after its end a render still answers a scrape on another connection (0: never). */
  readonly reuseMs: number;
  readonly now?: () => number;
}

export interface SharedRender {
  /** The render for one scrape on `connection` (any object standing for it: its socket). */
  (connection?: object): Promise<Rendered>;
  /** Renders made so far. */
  readonly renders: () => number;
}

export function sharedRender(renderText: () => Promise<string>, options: SharedRenderOptions): SharedRender {
  const now = options.now ?? Date.now;
  let inflight: Promise<Rendered> | undefined;
  let last: Rendered | undefined;
  let renders = 0;
  /** The render each connection was last answered with. */
  const served = new WeakMap<object, Rendered>();
  const start = (): Promise<Rendered> => {
    const work = new Promise<void>((resolve) => setImmediate(resolve)).then(async (): Promise<Rendered> => {
      renders += 1;
      const body = Buffer.from(await renderText(), 'utf8');
      let zipped: Promise<Buffer> | undefined;
      // level 1: the text shrinks about 10x at a fraction of the default level's CPU
      const gzip = (): Promise<Buffer> => (zipped ??= gzipAsync(body, { level: constants.Z_BEST_SPEED }));
      return { body, gzip, at: now() };
    });
    inflight = work;
    work
      .then((rendered) => {
        last = rendered;
      })
      .catch(() => undefined)
      .finally(() => {
        if (inflight === work) inflight = undefined;
      });
    return work;
  };
  const pick = (): Promise<Rendered> => {
    if (inflight !== undefined) return inflight;
    return start();
  };
  const render = async (connection?: object): Promise<Rendered> => {
    const recent = last !== undefined && options.reuseMs > 0 && now() - last.at <= options.reuseMs;
    const fresh =
      inflight === undefined &&
      recent &&
      last !== undefined &&
      (connection === undefined || served.get(connection) !== last)
        ? last
        : await pick();
    if (connection !== undefined) served.set(connection, fresh);
    return fresh;
  };
  return Object.assign(render, { renders: () => renders });
}
