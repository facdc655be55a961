// Progress of a long command on stderr, only when stderr is a terminal (never in a pipe or a
// log): one line rewritten in place, at most every 200 ms, erased at the end.
export interface Progress {
  update(done: number, total: number): void;
  end(): void;
}

const SILENT: Progress = { update: () => undefined, end: () => undefined };

export function progress(
  label: string,
  stream: NodeJS.WriteStream = process.stderr,
  now: () => number = Date.now,
): Progress {
  if (!stream.isTTY) return SILENT;
  let shown = false;
  let last = 0;
  return {
    update(done, total) {
      const t = now();
      if (done < total && t - last < 200) return;
      last = t;
      shown = true;
      stream.write(
        `\r${label}: ${done}/${total} pipe${total === 1 ? '' : 's'} (${Math.floor((done / Math.max(1, total)) * 100)}%)\u001b[K`,
      );
    },
    end() {
      if (shown) stream.write('\r\u001b[K');
    },
  };
}
