import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";

/** Loopback, link-local, private, shared and unspecified ranges: never a webhook's target by default. */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
] as const) {
  BLOCKED.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
] as const) {
  BLOCKED.addSubnet(net, prefix, "ipv6");
}

export class BlockedAddressError extends Error {
  readonly code = "webhook_address_blocked";
}

export function isBlockedAddress(address: string): boolean {
  // An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it carries.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  // The same written in hex (::ffff:7f00:1) is refused outright: no webhook host needs it.
  if (mapped === undefined && /^::ffff:[0-9a-f]{1,4}:[0-9a-f]{1,4}$/i.test(address)) return true;
  const target = mapped ?? address;
  const family = isIP(target);
  if (family === 0) return false;
  return BLOCKED.check(target, family === 4 ? "ipv4" : "ipv6");
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for the webhook connection that refuses blocked addresses. It runs at connect
 * time, so a name that resolves to a private address later (DNS rebinding) is refused too.
 */
export function guardedLookup(hostname: string, options: object, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const list = addresses as LookupAddress[];
    const bad = list.find((a) => isBlockedAddress(a.address));
    if (bad) {
      return callback(
        new BlockedAddressError(`webhook host ${hostname} resolves to a blocked address`),
        [],
      );
    }
    if ((options as { all?: boolean }).all) return callback(null, list);
    const first = list[0] as LookupAddress;
    return callback(null, first.address, first.family);
  });
}

/** Refuses a URL whose host is a blocked literal address (literals skip `lookup`). */
export function assertAllowedWebhookUrl(url: string): void {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  if (isBlockedAddress(host))
    throw new BlockedAddressError(`webhook host ${host} is a blocked address`);
}
