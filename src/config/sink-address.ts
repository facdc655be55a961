// Whether a notification sink's URL names a host inside the machine or its private network: a
// loopback, link-local (the cloud's metadata service at 169.254.169.254), private or unspecified
// address, or localhost. A sink there is refused unless it says it means it
// (`allowPrivateNetwork: true`): a config edited by mistake, or by someone who should not reach
// those hosts, must not turn the daemon into a client of Redis or of the metadata service.
// Only an address written in the URL is checked; a host name is resolved when a message is sent.
import { BlockList, isIP } from 'node:net';

const RANGES: readonly (readonly [string, number, 'ipv4' | 'ipv6', string])[] = [
  ['0.0.0.0', 8, 'ipv4', 'an unspecified'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback'],
  ['10.0.0.0', 8, 'ipv4', 'a private'],
  ['172.16.0.0', 12, 'ipv4', 'a private'],
  ['192.168.0.0', 16, 'ipv4', 'a private'],
  ['100.64.0.0', 10, 'ipv4', 'a shared (carrier-grade NAT)'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local'],
  ['::', 128, 'ipv6', 'an unspecified'],
  ['::1', 128, 'ipv6', 'a loopback'],
  ['fc00::', 7, 'ipv6', 'a private (unique local)'],
  ['fe80::', 10, 'ipv6', 'a link-local'],
];

const LISTS = RANGES.map(([net, prefix, family, kind]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return { list, family, kind };
});

/** An IPv6 address that embeds an IPv4 one (::ffff:127.0.0.1, ::ffff:7f00:1): that IPv4 address. */
function mappedV4(v6: string): string | null {
  const m = /^::ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(v6);
  if (m === null) return null;
  const [, dotted, high, low] = m;
  if (dotted !== undefined) return dotted;
  const hi = parseInt(high ?? '0', 16);
  const lo = parseInt(low ?? '0', 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/** "a loopback address (127.0.0.1)" when the URL's host is one of those, else null. */
export function privateHost(url: string): string | null {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return 'a loopback address (localhost)';
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  const v4 = isIP(bare) === 6 ? mappedV4(bare) : null;
  const address = v4 ?? bare;
  const family = isIP(address) === 4 ? 'ipv4' : isIP(address) === 6 ? 'ipv6' : null;
  if (family === null) return null;
  const hit = LISTS.find((l) => l.family === family && l.list.check(address, family));
  return hit ? `${hit.kind} address (${bare})` : null;
}
