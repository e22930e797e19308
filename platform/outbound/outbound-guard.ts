/**
 * Outbound guard: the one SSRF rule set for every outbound HTTP call of both services (notification
 * channels, the event sink, the knowledge store's handoff webhooks, review evaluator, acquisition
 * connectors, embedder, reranker and extractor; docs/adr/0135-one-outbound-guard.md). A target URL
 * must be http(s); every address its host resolves to must be public (no loopback, private,
 * link-local, unspecified, multicast or reserved ranges) unless the policy allows private targets.
 * The request connects to the address that was checked, so a DNS answer cannot change between
 * check and connect.
 */
import dns from 'node:dns/promises';
import net from 'node:net';
import { ValidationError } from '../../domain/errors.js';
import { OutboundRefused } from '../errors.js';

/**
 * The refused ranges, first match wins. Node's BlockList also matches an IPv4 rule against the
 * IPv4-mapped IPv6 form of the address (`::ffff:7f00:1` is 127.0.0.1).
 */
const BLOCKED_RANGES: readonly (readonly [reason: string, cidrs: readonly string[]])[] = [
  ['loopback', ['127.0.0.0/8', '::1/128']],
  ['unspecified', ['0.0.0.0/8', '::/128']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']],
  ['private (shared address space)', ['100.64.0.0/10']],
  ['private (unique local)', ['fc00::/7']],
  ['link-local', ['169.254.0.0/16', 'fe80::/10']],
  ['multicast', ['224.0.0.0/4', 'ff00::/8']],
  ['reserved (benchmarking)', ['198.18.0.0/15']],
  // 192.0.0.0/24 (protocol assignments), 240.0.0.0/4 (incl. broadcast), NAT64, documentation,
  // IPv4-compatible (::/96) and IPv4-translated (::ffff:0:0:0/96) addresses.
  ['reserved', ['192.0.0.0/24', '240.0.0.0/4', '64:ff9b::/96', '2001:db8::/32', '::/96', '::ffff:0:0:0/96']],
];

const BLOCK_LISTS = BLOCKED_RANGES.map(([reason, cidrs]) => {
  const list = new net.BlockList();
  for (const cidr of cidrs) {
    const [network = '', prefix = ''] = cidr.split('/');
    list.addSubnet(network, Number(prefix), net.isIP(network) === 6 ? 'ipv6' : 'ipv4');
  }
  return { reason, list };
});

/** Why an address is refused, or undefined when it is public; anything but an IP literal is refused. */
export function blockedAddressReason(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = net.isIP(bare);
  if (family === 0) return 'not an IP address';
  const type = family === 6 ? 'ipv6' : 'ipv4';
  return BLOCK_LISTS.find(({ list }) => list.check(bare, type))?.reason;
}

/** Policy for outbound notification requests. */
export interface OutboundPolicy {
  /** Allow loopback, private and link-local targets (tests, local receivers). @default false */
  readonly allowPrivate: boolean;
  /** Resolves a host name to addresses; @default DNS (`dns.lookup`, all addresses). */
  readonly resolve?: (host: string) => Promise<readonly string[]>;
}

/** Resolves a host name to all its addresses with `dns.lookup`. */
export const defaultResolve = async (host: string): Promise<string[]> =>
  (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Checks the shape of a target URL without DNS (used when a channel is created). */
export function checkTargetUrl(raw: string, policy: OutboundPolicy, field = 'url'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError(`${field}: "${raw}" is not a URL`, { code: 'invalid_request', details: { field } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ValidationError(`${field}: only http and https targets are allowed`, {
      code: 'invalid_request',
      details: { field },
    });
  if (url.username !== '' || url.password !== '')
    throw new ValidationError(`${field}: credentials in the URL are not allowed`, {
      code: 'invalid_request',
      details: { field },
    });
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate) {
    if (host === 'localhost' || host.endsWith('.localhost'))
      throw new ValidationError(`${field}: target ${host} is loopback, which is not allowed`, {
        code: 'target_not_allowed',
        details: { field, reason: 'loopback' },
      });
    if (net.isIP(host) !== 0) {
      const reason = blockedAddressReason(host);
      if (reason !== undefined)
        throw new ValidationError(`${field}: target ${host} is ${reason}, which is not allowed`, {
          code: 'target_not_allowed',
          details: { field, reason },
        });
    }
  }
  return url;
}

/**
 * Resolves the URL's host and returns the address to connect to, refusing when any resolved address
 * is blocked (a host with one public and one private address is refused).
 */
export async function resolveTarget(url: URL, policy: OutboundPolicy): Promise<ResolvedTarget> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = net.isIP(host) !== 0 ? [host] : await (policy.resolve ?? defaultResolve)(host);
  if (addresses.length === 0) throw new OutboundRefused(`${host} does not resolve`);
  if (!policy.allowPrivate) {
    for (const address of addresses) {
      const reason = blockedAddressReason(address);
      if (reason !== undefined) throw new OutboundRefused(`${host} resolves to ${address}, which is ${reason}`);
    }
  }
  const all = addresses.map((address) => ({ address, family: net.isIP(address) === 6 ? (6 as const) : (4 as const) }));
  return { ...all[0]!, all };
}

/** The addresses a request may connect to: all checked, the first preferred. */
export interface ResolvedTarget {
  readonly address: string;
  readonly family: 4 | 6;
  /** Every resolved address (each one checked), for connections that try them in turn. */
  readonly all: readonly { readonly address: string; readonly family: 4 | 6 }[];
}
