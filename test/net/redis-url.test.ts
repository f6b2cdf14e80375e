import { describe, expect, it } from "vitest";
import { isClusterUrl, nodeUrl, parseClusterUrl } from "../../src/net/redis-url.js";

describe("a redis+cluster:// URL", () => {
  it("names the seed nodes, the user, the password and TLS", () => {
    const target = parseClusterUrl("rediss+cluster://ops:p%40ss:w@10.0.0.1:6379,[::1]:7000");
    expect(target).toEqual({
      tls: true,
      username: "ops",
      password: "p@ss:w",
      nodes: [
        { host: "10.0.0.1", port: 6379 },
        { host: "::1", port: 7000 },
      ],
    });
    if (typeof target === "string") throw new Error(target);
    expect(nodeUrl(target, { host: "::1", port: 7000 })).toBe("rediss://ops:p%40ss%3Aw@[::1]:7000");
  });

  it.each([
    [
      "redis+cluster://h1:6379,",
      "each seed node must be host:port (port 1 to 65535), separated by commas",
    ],
    [
      "redis+cluster://h1:0",
      "each seed node must be host:port (port 1 to 65535), separated by commas",
    ],
    ["redis+cluster://h1:6379/2", "a cluster has one database: leave the path out (or /0)"],
    ["redis+cluster://:%zz@h1:6379", "the user and password must be percent-encoded"],
  ])("refuses %s: %s", (url, rule) => {
    expect(parseClusterUrl(url)).toBe(rule);
  });

  it("is told apart from a single Redis", () => {
    expect(isClusterUrl("redis+cluster://h:1")).toBe(true);
    expect(isClusterUrl("REDISS+CLUSTER://h:1")).toBe(true);
    expect(isClusterUrl("redis://h:1")).toBe(false);
  });
});
