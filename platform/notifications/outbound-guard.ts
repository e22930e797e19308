/**
 * Outbound guard: SSRF rules for notification targets. A target URL must be http(s); every address
 * its host resolves to must be public (no loopback, private, link-local, unspecified, multicast or
 * reserved ranges) unless configuration allows private targets. The request connects to the
 * address that was checked, so a DNS answer cannot change between check and connect.
 */
import dns from 'node:dns/promises';
import net from 'node:net';
import { ValidationError } from '../../domain/errors.js';

/** Why an address is refused, or undefined when it is public. */
export function blockedAddressReason(address: string): string | undefined {
  const family = net.isIP(address);
  if (family === 4) return blockedIpv4(address);
  if (family === 6) {
    const lower = address.toLowerCase().replace(/^\[|\]$/g, '');
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
    if (mapped) return blockedIpv4(mapped[1]!);
    if (lower === '::1') return 'loopback';
    if (lower === '::') return 'unspecified';
    const first = parseInt(lower.split(':')[0] || '0', 16);
    if ((first & 0xffc0) === 0xfe80) return 'link-local';
    if ((first & 0xfe00) === 0xfc00) return 'private (unique local)';
    if ((first & 0xff00) === 0xff00) return 'multicast';
    if (lower.startsWith('64:ff9b:') || lower.startsWith('2001:db8:')) return 'reserved';
    return undefined;
  }
  return 'not an IP address';
}

function blockedIpv4(address: string): string | undefined {
  const [a = 0, b = 0] = address.split('.').map(Number);
  if (a === 127) return 'loopback';
  if (a === 0) return 'unspecified';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'private (shared address space)';
  if (a === 169 && b === 254) return 'link-local';
  if (a >= 224) return a >= 240 ? 'reserved' : 'multicast';
  if (a === 192 && b === 0) return 'reserved';
  if (a === 198 && (b === 18 || b === 19)) return 'reserved (benchmarking)';
  return undefined;
}

/** Policy for outbound notification requests. */
export interface OutboundPolicy {
  /** Allow loopback, private and link-local targets (tests, local receivers). @default false */
  readonly allowPrivate: boolean;
  /** Resolves a host name to addresses; @default DNS (`dns.lookup`, all addresses). */
  readonly resolve?: (host: string) => Promise<readonly string[]>;
}

const defaultResolve = async (host: string): Promise<string[]> => (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Checks the shape of a target URL without DNS (used when a channel is created). */
export function checkTargetUrl(raw: string, policy: OutboundPolicy, field = 'url'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError(`${field}: "${raw}" is not a URL`, { code: 'invalid_request', details: { field } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ValidationError(`${field}: only http and https targets are allowed`, { code: 'invalid_request', details: { field } });
  if (url.username !== '' || url.password !== '') throw new ValidationError(`${field}: credentials in the URL are not allowed`, { code: 'invalid_request', details: { field } });
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate) {
    if (host === 'localhost' || host.endsWith('.localhost')) throw new ValidationError(`${field}: target ${host} is loopback, which is not allowed`, { code: 'target_not_allowed', details: { field, reason: 'loopback' } });
    if (net.isIP(host) !== 0) {
      const reason = blockedAddressReason(host);
      if (reason !== undefined) throw new ValidationError(`${field}: target ${host} is ${reason}, which is not allowed`, { code: 'target_not_allowed', details: { field, reason } });
    }
  }
  return url;
}

/**
 * Resolves the URL's host and returns the address to connect to, refusing when any resolved address
 * is blocked (a host with one public and one private address is refused).
 */
export async function resolveTarget(url: URL, policy: OutboundPolicy): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = net.isIP(host) !== 0 ? [host] : await (policy.resolve ?? defaultResolve)(host);
  if (addresses.length === 0) throw new OutboundRefused(`${host} does not resolve`);
  if (!policy.allowPrivate) {
    for (const address of addresses) {
      const reason = blockedAddressReason(address);
      if (reason !== undefined) throw new OutboundRefused(`${host} resolves to ${address}, which is ${reason}`);
    }
  }
  const address = addresses[0]!;
  return { address, family: net.isIP(address) === 6 ? 6 : 4 };
}

/** A delivery refused by the outbound guard before any connection. */
export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefused';
  }
}
