// What `status`, `pause` and `resume` read of a config: they talk to Redis only, so the API's base
// URL and credentials, the Prometheus connection and the notification sinks are cut from the document before anything is
// interpolated. Their variables need not be set and no key file is read: an operator's shell with
// only the Redis settings can run them (the daemon's own config keeps its secrets elsewhere).
import { isMap, type Document } from 'yaml';

const API_CONNECTION = ['baseUrl', 'fixtures', 'keyId', 'keySecret', 'keySecretFile'] as const;
const KEY_CREDENTIALS = ['keyId', 'keySecret', 'keySecretFile'] as const;

/** Cut the API connection and the Prometheus server out of a parsed config document, in place. */
export function cutConnections(doc: Document): void {
  const api = doc.get('api', true);
  if (isMap(api)) {
    for (const k of API_CONNECTION) api.delete(k);
    const keys = api.get('keys', true);
    if (isMap(keys)) {
      for (const pair of keys.items) {
        if (isMap(pair.value)) for (const k of KEY_CREDENTIALS) pair.value.delete(k);
      }
    }
  }
  // notification sinks (their URLs and secrets) are the daemon's business only
  doc.delete('notify');
  // metric policies need a Prometheus to be configured; where it is does not matter here
  if (doc.hasIn(['metrics', 'prometheus']))
    doc.setIn(['metrics', 'prometheus'], doc.createNode({ url: 'http://prometheus.invalid' }));
}
