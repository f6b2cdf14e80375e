import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { MoneyqError } from "../errors/moneyq-error.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

/**
 * IPv6 ranges that carry an IPv4 address in their last 32 bits: IPv4-mapped (::ffff:0:0/96),
 * IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96) and IPv4-compatible (::/96). Such an
 * address is judged as the IPv4 address it carries: ::ffff:8.8.8.8 is public, ::ffff:127.0.0.1
 * is loopback.
 */
const LAST_32_BITS: Range[] = [
  ipaddr.parseCIDR("::ffff:0:0/96"),
  ipaddr.parseCIDR("::ffff:0:0:0/96"),
  ipaddr.parseCIDR("64:ff9b::/96"),
  ipaddr.parseCIDR("::/96"),
];
/** 6to4 (2002::/16) carries its IPv4 address in bits 16 to 47. */
const SIX_TO_FOUR = ipaddr.parseCIDR("2002::/16");
/** IANA's global unicast space: any other IPv6 address is not a public host's. */
const GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");

export class BlockedAddressError extends MoneyqError {
  readonly code = "webhook_address_blocked";
}

/** The IPv4 address an IPv6 address carries, if it is of a form that carries one. */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const bytes = address.toByteArray();
  if (LAST_32_BITS.some((range) => address.match(range)))
    return new ipaddr.IPv4(bytes.slice(12, 16));
  if (address.match(SIX_TO_FOUR)) return new ipaddr.IPv4(bytes.slice(2, 6));
  return undefined;
}

/**
 * Only public unicast addresses are open: ipaddr.js's range table names every other range
 * (loopback, private, link-local, carrier-grade NAT, multicast, broadcast, reserved and
 * benchmarking ranges such as 240.0.0.0/4, 198.18.0.0/15 and 192.0.0.0/24; unique-local,
 * site-local fec0::/10, discard, Teredo, documentation and the rest), so each is blocked;
 * an IPv6 address must also be in 2000::/3.
 */
function isPublic(address: Address): boolean {
  if (address.kind() === "ipv4") return address.range() === "unicast";
  const carried = embeddedIpv4(address as ipaddr.IPv6);
  if (carried !== undefined) return carried.range() === "unicast";
  return address.range() === "unicast" && address.match(GLOBAL_UNICAST);
}

function inRanges(address: Address, ranges: readonly Range[]): boolean {
  const forms: Address[] = [address];
  if (address.kind() === "ipv6") {
    const carried = embeddedIpv4(address as ipaddr.IPv6);
    if (carried !== undefined) forms.push(carried);
  }
  return forms.some((form) =>
    ranges.some((range) => range[0].kind() === form.kind() && form.match(range)),
  );
}

/** Ranges that hold IPv6 forms of IPv4 addresses: an allowed range may not contain one whole. */
const IPV4_CARRIERS: Range[] = [...LAST_32_BITS, SIX_TO_FOUR];

/**
 * Why a CIDR entry of the allow list is refused, or undefined if it is a range to open. A
 * range is written as its network (no host bits set: 127.0.0.1/8 is refused, 127.0.0.0/8
 * is meant), is narrower than /0, and an IPv6 range may not hold a whole range of IPv6
 * forms of IPv4 addresses (::ffff:127.0.0.1/8 would open ::/8: ::1, every IPv4-mapped and
 * NAT64 address); allow IPv4 ranges as IPv4.
 */
export function allowedRangeProblem(entry: string): string | undefined {
  const [address, bits] = ipaddr.parseCIDR(entry);
  if (bits === 0) return "a /0 range opens every address: list only your receivers' ranges";
  const network =
    address.kind() === "ipv4"
      ? ipaddr.IPv4.networkAddressFromCIDR(entry)
      : ipaddr.IPv6.networkAddressFromCIDR(entry);
  if (network.kind() === "ipv6") {
    const carrier = IPV4_CARRIERS.find(
      ([start, length]) => bits <= length && start.match(network, bits),
    );
    if (carrier)
      return `it contains ${carrier[0].toString()}/${carrier[1]}, IPv6 forms of IPv4 addresses (a mapped form needs more than /96): list IPv4 ranges as IPv4`;
  }
  if (network.toString() !== address.toString())
    return `host bits are set: write the range as ${network.toString()}/${bits}`;
  return undefined;
}

/** Parses CIDR ranges (config/webhooks.ts has checked them). */
function parseRanges(cidrs: readonly string[]): Range[] {
  return cidrs.map((cidr) => ipaddr.parseCIDR(cidr));
}

/** What is not an address cannot be judged, so it is refused. */
function blocked(address: string, allowed: readonly Range[]): boolean {
  if (!ipaddr.isValid(address)) return true;
  const parsed = ipaddr.parse(address);
  return !isPublic(parsed) && !inRanges(parsed, allowed);
}

/**
 * True if `address` is not a public unicast address and is in none of the `allowed` CIDR
 * ranges (MONEYQ_WEBHOOK_ALLOW_PRIVATE), or is not an IP address at all.
 */
export function isBlockedAddress(address: string, allowed: readonly string[] = []): boolean {
  return blocked(address, parseRanges(allowed));
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
export function guardedLookup(allowed: readonly string[] = []) {
  const ranges = parseRanges(allowed);
  return (hostname: string, options: object, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      if (list.some((a) => blocked(a.address, ranges))) {
        return callback(
          new BlockedAddressError(`webhook host ${hostname} resolves to a blocked address`),
          [],
        );
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      const first = list[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}

/**
 * Why a webhook URL's host may not be reached, when it is a blocked literal address (a name is
 * judged by guardedLookup when it is resolved); undefined when it may be. Names the address's
 * range as ipaddr.js does (loopback, private, linkLocal, uniqueLocal, reserved...).
 */
export function blockedWebhookHost(
  url: string,
  allowed: readonly string[] = [],
): string | undefined {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) === 0 || !isBlockedAddress(host, allowed)) return undefined;
  return `host ${host} is in the ${rangeName(ipaddr.parse(host))} range, not a public address`;
}

/** The range an address is in, as ipaddr.js names it; an IPv6 form of IPv4 by the IPv4 one's. */
function rangeName(address: Address): string {
  const own = address.range();
  const carried = address.kind() === "ipv6" ? embeddedIpv4(address as ipaddr.IPv6) : undefined;
  if (carried !== undefined && CARRIER_RANGE_NAMES.includes(own))
    return `${carried.range()} (${carried.toString()})`;
  // An IPv6 address ipaddr.js calls unicast, but outside the global unicast space.
  return own === "unicast" && address.kind() === "ipv6" ? "non-global IPv6 unicast" : own;
}

/** ipaddr.js's names of the IPv6 ranges that carry an IPv4 address (::/96 has none). */
const CARRIER_RANGE_NAMES = ["ipv4Mapped", "rfc6145", "rfc6052", "6to4", "unicast"];

/** Refuses a URL whose host is a blocked literal address (literals skip `lookup`). */
export function assertAllowedWebhookUrl(url: string, allowed: readonly string[] = []): void {
  const blocked = blockedWebhookHost(url, allowed);
  if (blocked !== undefined) throw new BlockedAddressError(`webhook ${blocked}`);
}
