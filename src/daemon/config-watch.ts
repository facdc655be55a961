// Hot reload: watch the config file and call back once per burst of changes. Editors replace a
// file by rename, which ends an fs.watch on the old inode, so the directory is watched instead.
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

export const RELOAD_DEBOUNCE_MS = 300;

export function watchConfig(path: string, onChange: () => void, debounceMs = RELOAD_DEBOUNCE_MS): () => void {
  const file = basename(resolve(path));
  let timer: NodeJS.Timeout | undefined;
  const watcher: FSWatcher = watch(dirname(resolve(path)), { persistent: false }, (_event, name) => {
    if (name !== null && name !== file) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  });
  watcher.on('error', () => {}); // a vanished directory must not crash the daemon
  return () => {
    clearTimeout(timer);
    watcher.close();
  };
}
