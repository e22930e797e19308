/**
 * Classification of webhook target addresses for SSRF protection: loopback, private, link-local,
 * unspecified, multicast, carrier-grade NAT and unique-local addresses are not public
 * (docs/adr/0033-handoff-webhooks.md).
 */
/** Why an address is not public, or undefined when it is. */
export function nonPublicReason(address: string): string | undefined {
  const family = ipFamily(address);
  if (family === 4) return ipv4Reason(address);
  if (family === 6) {
    const a = address.toLowerCase().replace(/^\[|\]$/g, '');
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
    if (mapped) return ipv4Reason(mapped[1]!);
    if (a === '::1') return 'loopback';
    if (a === '::') return 'unspecified';
    const first = parseInt(a.split(':')[0] || '0', 16);
    if ((first & 0xffc0) === 0xfe80) return 'link-local';
    if ((first & 0xfe00) === 0xfc00) return 'unique-local (private)';
    if ((first & 0xff00) === 0xff00) return 'multicast';
    return undefined;
  }
  return 'not an IP address';
}

function ipv4Reason(address: string): string | undefined {
  const [a = 0, b = 0] = address.split('.').map(Number);
  if (a === 127) return 'loopback';
  if (a === 0) return 'unspecified';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 169 && b === 254) return 'link-local';
  if (a === 100 && b >= 64 && b <= 127) return 'carrier-grade NAT (private)';
  if (a >= 224) return 'multicast or reserved';
  return undefined;
}

/** 4 for a dotted-quad IPv4 address, 6 for an IPv6 address, 0 otherwise. */
export function ipFamily(address: string): 0 | 4 | 6 {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (v4) return v4.slice(1).every((p) => Number(p) <= 255) ? 4 : 0;
  const a = address.replace(/^\[|\]$/g, '');
  if (!a.includes(':') || !/^[0-9a-fA-F:.]+$/.test(a) || (a.match(/::/g) ?? []).length > 1) return 0;
  return 6;
}
