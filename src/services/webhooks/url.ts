/**
 * Where webhooks may point (docs/api.md "Webhooks", "Receiving webhooks").
 *
 * With the public-address rule on (always in production), a webhook URL must be https and its host
 * must be, or resolve only to, public unicast addresses: never private, loopback, link-local,
 * multicast, unspecified, carrier-grade NAT or other reserved ranges, and an IPv4-mapped IPv6
 * address is judged as the IPv4 address it carries. The rule is checked when the URL is
 * registered and again on the very addresses a delivery connects to (`guardedLookup` is the
 * connection's DNS lookup), so a name that resolves to a public address at registration and to
 * 127.0.0.1 later (DNS rebinding) is still refused.
 */
import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { urlSyntaxProblem } from '../../contracts/webhook-url';

/** Resolves a host name to its addresses (IPv4 and IPv6, as strings). */
export type HostResolver = (hostname: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export interface WebhookUrlPolicy {
  /** https only and public addresses only (forced on in production). */
  requirePublicHttps: boolean;
  resolve: HostResolver;
}

/** A connection refused by the address rule; its message names the address, never a secret. */
export class BlockedAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BlockedAddressError';
  }
}

/** Only global unicast counts as public; every special-purpose range is refused. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // process() turns an IPv4-mapped IPv6 address (::ffff:127.0.0.1) into the IPv4 address it carries.
  return ipaddr.process(address).range() === 'unicast';
}

/** The host of a URL as a resolver or net.isIP wants it (IPv6 literals lose their brackets). */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

export { urlSyntaxProblem } from '../../contracts/webhook-url';

/**
 * The registration check. Returns the reason the URL is refused, or null. Outside the
 * public-address rule any http(s) URL is accepted, so receivers on localhost work in development.
 */
export async function webhookUrlProblem(value: string, policy: WebhookUrlPolicy): Promise<string | null> {
  const syntax = urlSyntaxProblem(value);
  if (syntax) return syntax;
  if (!policy.requirePublicHttps) return null;
  const url = new URL(value);
  if (url.protocol !== 'https:') return 'must use https';
  const host = urlHost(url);
  let addresses: string[];
  if (net.isIP(host) !== 0) {
    addresses = [host];
  } else {
    try {
      addresses = await policy.resolve(host);
    } catch {
      return 'host could not be resolved';
    }
  }
  if (addresses.length === 0) return 'host could not be resolved';
  if (addresses.some((a) => !isPublicAddress(a)))
    return 'must not point to a private, loopback, link-local or multicast address';
  return null;
}

/**
 * A DNS lookup for http.request that resolves with `resolve` and, when `enforce` is on, fails the
 * connection if any address is not public. Node connects only to addresses this returns, so the
 * check holds for the address actually connected to.
 */
export function guardedLookup(resolve: HostResolver, enforce: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname)
      .then((all) => {
        const blocked = enforce ? all.find((a) => !isPublicAddress(a)) : undefined;
        if (blocked !== undefined)
          throw new BlockedAddressError(`${hostname} resolves to ${blocked}, which is not a public address`);
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const found = all
          .map((address) => ({ address, family: net.isIP(address) }))
          .filter((a) => a.family !== 0 && (wanted === 0 || a.family === wanted));
        const first = found[0];
        if (!first) throw Object.assign(new Error(`${hostname} has no usable address`), { code: 'ENOTFOUND' });
        if (options.all) callback(null, found);
        else callback(null, first.address, first.family);
      })
      .catch((err: NodeJS.ErrnoException) => callback(err, '', 0));
  };
}
