import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load-config.js";
import {
  assertAllowedWebhookUrl,
  BlockedAddressError,
  guardedLookup,
  isBlockedAddress,
} from "../../src/net/address-guard.js";

/** Addresses no webhook may reach by default, each with the range it stands for. */
const BLOCKED: [string, string][] = [
  ["0.0.0.0", "0.0.0.0/8 this network"],
  ["0.1.2.3", "0.0.0.0/8 this network"],
  ["10.0.0.1", "10.0.0.0/8 private"],
  ["100.64.0.1", "100.64.0.0/10 carrier-grade NAT"],
  ["100.127.255.254", "100.64.0.0/10 carrier-grade NAT"],
  ["127.0.0.1", "127.0.0.0/8 loopback"],
  ["127.8.9.10", "127.0.0.0/8 loopback"],
  ["169.254.169.254", "169.254.0.0/16 link-local (cloud metadata)"],
  ["172.16.0.1", "172.16.0.0/12 private"],
  ["172.31.255.255", "172.16.0.0/12 private"],
  ["192.0.0.1", "192.0.0.0/24 IETF protocol assignments"],
  ["192.0.0.170", "192.0.0.0/24 IETF protocol assignments (NAT64 discovery)"],
  ["192.0.2.1", "192.0.2.0/24 documentation"],
  ["192.88.99.1", "192.88.99.0/24 6to4 relay anycast"],
  ["192.168.1.1", "192.168.0.0/16 private"],
  ["198.18.0.1", "198.18.0.0/15 benchmarking"],
  ["198.19.255.254", "198.18.0.0/15 benchmarking"],
  ["198.51.100.7", "198.51.100.0/24 documentation"],
  ["203.0.113.9", "203.0.113.0/24 documentation"],
  ["224.0.0.1", "224.0.0.0/4 multicast"],
  ["239.255.255.250", "224.0.0.0/4 multicast"],
  ["240.0.0.1", "240.0.0.0/4 reserved"],
  ["250.1.2.3", "240.0.0.0/4 reserved"],
  ["255.255.255.255", "255.255.255.255 broadcast"],
  ["::", "::/128 unspecified"],
  ["::1", "::1/128 loopback"],
  ["fe80::1", "fe80::/10 link-local"],
  ["fe80::1%eth0", "fe80::/10 link-local, with a zone"],
  ["fc00::1", "fc00::/7 unique local"],
  ["fd12:3456::1", "fc00::/7 unique local"],
  ["fec0::1", "fec0::/10 site-local (deprecated)"],
  ["feff::1", "fec0::/10 site-local (deprecated)"],
  ["ff02::1", "ff00::/8 multicast"],
  ["ff05::1:3", "ff00::/8 multicast"],
  ["100::1", "100::/64 discard"],
  ["2001:db8::1", "2001:db8::/32 documentation"],
  ["2001::1", "2001::/32 Teredo"],
  ["2001:2::1", "2001:2::/48 benchmarking"],
  ["3fff::1", "3fff::/20 documentation"],
  ["5f00::1", "5f00::/16 segment routing"],
  ["4000::1", "outside 2000::/3 global unicast"],
  ["::1:0:0:1", "outside 2000::/3 global unicast"],
  ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
  ["::ffff:7f00:1", "IPv4-mapped loopback, in hex"],
  ["::ffff:10.0.0.1", "IPv4-mapped private"],
  ["::ffff:169.254.169.254", "IPv4-mapped link-local"],
  ["::ffff:0:127.0.0.1", "IPv4-translated loopback"],
  ["::ffff:0:a00:1", "IPv4-translated private, in hex"],
  ["::127.0.0.1", "IPv4-compatible loopback"],
  ["::7f00:1", "IPv4-compatible loopback, in hex"],
  ["::10.1.2.3", "IPv4-compatible private"],
  ["64:ff9b::127.0.0.1", "NAT64 of loopback"],
  ["64:ff9b::7f00:1", "NAT64 of loopback, in hex"],
  ["64:ff9b::a9fe:a9fe", "NAT64 of link-local (cloud metadata)"],
  ["64:ff9b::c0a8:101", "NAT64 of private"],
  ["64:ff9b:1::1", "64:ff9b:1::/48 local-use NAT64"],
  ["2002:7f00:1::1", "6to4 of loopback"],
  ["2002:c0a8:101::1", "6to4 of private"],
  ["2002:a9fe:a9fe::", "6to4 of link-local"],
  ["2002:e000:1::1", "6to4 of multicast"],
];

/** Public unicast addresses, plain or carried in an IPv6 form. */
const OPEN: [string, string][] = [
  ["8.8.8.8", "public IPv4"],
  ["1.1.1.1", "public IPv4"],
  ["172.32.0.1", "just past 172.16.0.0/12"],
  ["100.128.0.1", "just past 100.64.0.0/10"],
  ["198.20.0.1", "just past 198.18.0.0/15"],
  ["192.0.3.1", "just past 192.0.2.0/24"],
  ["223.255.255.254", "just below 224.0.0.0/4"],
  ["2001:4860:4860::8888", "public IPv6"],
  ["2606:4700:4700::1111", "public IPv6"],
  ["::ffff:8.8.8.8", "IPv4-mapped public"],
  ["::ffff:0:8.8.8.8", "IPv4-translated public"],
  ["64:ff9b::8.8.8.8", "NAT64 of public"],
  ["64:ff9b::808:808", "NAT64 of public, in hex"],
  ["2002:808:808::1", "6to4 of public"],
];

describe("the webhook address guard classifies by range", () => {
  it.each(BLOCKED)("%s is blocked (%s)", (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(OPEN)("%s is open (%s)", (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });

  it("refuses a URL whose host is a blocked literal, in any spelling", () => {
    for (const url of [
      "http://127.0.0.1:8080/hook",
      "http://2130706433/hook",
      "http://0x7f.1/hook",
      "http://[::ffff:127.0.0.1]/hook",
      "http://[64:ff9b::a9fe:a9fe]/hook",
      "http://[2002:a9fe:a9fe::1]/hook",
      "https://[fec0::1]/hook",
      "https://255.255.255.255/hook",
    ])
      expect(() => assertAllowedWebhookUrl(url), url).toThrow(BlockedAddressError);
    expect(() => assertAllowedWebhookUrl("https://hooks.example.com/moneyq")).not.toThrow();
  });

  it("refuses a name that resolves to a blocked address at connect time", async () => {
    const resolve = (lookup: ReturnType<typeof guardedLookup>) =>
      new Promise<unknown>((done, fail) =>
        lookup("localhost", { all: true }, (error, addresses) =>
          error ? fail(error) : done(addresses),
        ),
      );
    await expect(resolve(guardedLookup())).rejects.toThrow(BlockedAddressError);
    await expect(resolve(guardedLookup(["127.0.0.0/8", "::1/128"]))).resolves.toEqual(
      expect.arrayContaining([expect.objectContaining({ address: expect.any(String) })]),
    );
  });
});

describe("MONEYQ_WEBHOOK_ALLOW_PRIVATE is a list of allowed CIDR ranges", () => {
  it("opens only the ranges listed, in both spellings of an address", () => {
    const allowed = ["127.0.0.0/8", "fd00::/8"];
    expect(isBlockedAddress("127.0.0.1", allowed)).toBe(false);
    expect(isBlockedAddress("::ffff:127.0.0.1", allowed)).toBe(false);
    expect(isBlockedAddress("fd12::1", allowed)).toBe(false);
    expect(isBlockedAddress("10.0.0.1", allowed)).toBe(true);
    expect(isBlockedAddress("169.254.169.254", allowed)).toBe(true);
    expect(isBlockedAddress("::1", allowed)).toBe(true);
    expect(isBlockedAddress("fc00::1", allowed)).toBe(true);
  });

  it("is read into canonical ranges, and a bad entry stops start-up naming it", () => {
    const config = loadConfig({
      MONEYQ_WEBHOOK_URL: "https://hooks.example.com/moneyq",
      MONEYQ_WEBHOOK_SECRET: "webhook_secret_0123456789abcdef",
      MONEYQ_WEBHOOK_ALLOW_PRIVATE: " 127.0.0.0/8, fd00:0::/8 ,::1/128",
    });
    expect(config.webhook?.allowedRanges).toEqual(["127.0.0.0/8", "fd00::/8", "::1/128"]);
    expect(loadConfig({}).webhook).toBeUndefined();

    for (const bad of ["localhost", "10.0.0.0/33", "::1/129", "127.1/8", "10.0.0.0"]) {
      let error: unknown;
      try {
        loadConfig({ MONEYQ_WEBHOOK_ALLOW_PRIVATE: `127.0.0.0/8,${bad}` });
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).issues).toEqual([
        {
          variable: "MONEYQ_WEBHOOK_ALLOW_PRIVATE",
          rule: `"${bad}" is not a CIDR range: give ranges like 127.0.0.0/8 or fd00::/8, comma-separated`,
        },
      ]);
    }
  });
});

describe("the allow list opens only what it names", () => {
  const issuesOf = (value: string) => {
    try {
      loadConfig({ MONEYQ_WEBHOOK_ALLOW_PRIVATE: value });
    } catch (error) {
      return (error as ConfigError).issues;
    }
    return [];
  };

  it("refuses /0, host bits set and IPv6 ranges that hold IPv6 forms of IPv4 addresses", () => {
    const refused: [string, string][] = [
      ["0.0.0.0/0", "a /0 range opens every address"],
      ["::/0", "a /0 range opens every address"],
      ["127.0.0.1/8", "host bits are set: write the range as 127.0.0.0/8"],
      ["10.1.2.3/16", "host bits are set: write the range as 10.1.0.0/16"],
      ["fd00::1/8", "host bits are set: write the range as fd00::/8"],
      ["::ffff:127.0.0.1/8", "it contains ::ffff:0:0/96"],
      ["::/8", "it contains ::ffff:0:0/96"],
      ["::ffff:0:0/96", "it contains ::ffff:0:0/96"],
      ["64:ff9b::/64", "it contains 64:ff9b::/96"],
      ["2002::/16", "it contains 2002::/16"],
      ["2000::/3", "it contains 2002::/16"],
    ];
    for (const [entry, rule] of refused) {
      const issues = issuesOf(`127.0.0.0/8,${entry}`);
      expect(issues, entry).toHaveLength(1);
      expect(issues[0]?.variable).toBe("MONEYQ_WEBHOOK_ALLOW_PRIVATE");
      expect(issues[0]?.rule, entry).toContain(`"${entry}" is refused: ${rule}`);
    }
    // A mapped range narrower than the whole mapped space is one IPv4 range's mapped form.
    expect(issuesOf("::ffff:127.0.0.0/104, 192.168.1.0/24, ::1/128")).toEqual([]);
    const allowed = ["::ffff:127.0.0.0/104"];
    expect(isBlockedAddress("::ffff:127.0.0.1", allowed)).toBe(false);
    expect(isBlockedAddress("::1", allowed)).toBe(true);
    expect(isBlockedAddress("::ffff:169.254.169.254", allowed)).toBe(true);
  });

  it("takes the switch's old off values as an empty list and says what an old on value must become", () => {
    for (const off of ["0", "false", " FALSE "])
      expect(
        loadConfig({
          MONEYQ_WEBHOOK_URL: "https://hooks.example.com/moneyq",
          MONEYQ_WEBHOOK_SECRET: "webhook_secret_0123456789abcdef",
          MONEYQ_WEBHOOK_ALLOW_PRIVATE: off,
        }).webhook?.allowedRanges,
        off,
      ).toEqual([]);
    for (const on of ["1", "true"])
      expect(issuesOf(on)).toEqual([
        {
          variable: "MONEYQ_WEBHOOK_ALLOW_PRIVATE",
          rule: `is no longer a switch ("${on}"): it takes a comma-separated list of the CIDR ranges to allow, such as 127.0.0.0/8,::1/128`,
        },
      ]);
  });

  it("refuses what is not an address instead of letting it through", () => {
    expect(isBlockedAddress("not-an-address")).toBe(true);
    expect(isBlockedAddress("example.com")).toBe(true);
    expect(isBlockedAddress("")).toBe(true);
    expect(isBlockedAddress("8.8.8.8")).toBe(false);
    // A name in a URL is judged when it is resolved, not refused here.
    expect(() => assertAllowedWebhookUrl("https://hooks.example.com/moneyq")).not.toThrow();
    expect(() => assertAllowedWebhookUrl("https://127.0.0.1/moneyq")).toThrow(BlockedAddressError);
  });
});
