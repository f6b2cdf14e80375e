import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import {
  CONFIG_DEFAULTS,
  ConfigError,
  loadConfig,
  PERMISSIONS,
  paymentRepeatsOf,
} from "../../src/config/load-config.js";
import { webhookSecretProblem } from "../../src/webhooks/webhook-secret.js";
import { profileFile } from "../fixtures/provider-profiles.js";
import { issuesOf } from "../helpers/config-issues.js";

const KEY = "sk_live_CANARY_0123456789";
const URL_V1 = "https://api.example.test/v1";

describe("loadConfig", () => {
  it("runs on embedded defaults with an empty environment", () => {
    const config = loadConfig({});
    expect(config.redisUrl).toBe(CONFIG_DEFAULTS.REDIS_URL);
    expect(config.paymentsApiUrl).toBeUndefined();
    expect(config.accounts).toEqual([]);
    expect(config.logLevel).toBe("info");
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.http)).toBe(true);
  });

  it("builds the default account from PAYMENTS_API_KEY with the global rate and concurrency", () => {
    const config = loadConfig({
      PAYMENTS_API_URL: URL_V1,
      PAYMENTS_API_KEY: KEY,
      MONEYQ_RATE_LIMIT_PER_SECOND: "25",
      MONEYQ_CONCURRENCY: "4",
    });
    expect(config.accounts).toHaveLength(1);
    const [account] = config.accounts;
    expect(account).toMatchObject({ alias: "default", ratePerSecond: 25, concurrency: 4 });
    expect(account?.apiKey).toBe(KEY);
  });

  it("reads several accounts from MONEYQ_ACCOUNTS, with a key given inline or by variable name", () => {
    const config = loadConfig({
      PAYMENTS_API_URL: URL_V1,
      PAYROLL_KEY: "sk_live_payroll_123",
      MONEYQ_ACCOUNTS: JSON.stringify([
        { alias: "payroll", apiKeyEnv: "PAYROLL_KEY", ratePerSecond: 10, concurrency: 2 },
        { alias: "market", apiKey: "sk_live_market_456" },
      ]),
    });
    expect(config.accounts.map((a) => [a.alias, a.apiKey, a.ratePerSecond, a.concurrency])).toEqual(
      [
        ["payroll", "sk_live_payroll_123", 10, 2],
        [
          "market",
          "sk_live_market_456",
          CONFIG_DEFAULTS.MONEYQ_RATE_LIMIT_PER_SECOND,
          CONFIG_DEFAULTS.MONEYQ_CONCURRENCY,
        ],
      ],
    );
  });

  it("keeps keys out of JSON, inspection and enumeration of the config", () => {
    const config = loadConfig({ PAYMENTS_API_URL: URL_V1, PAYMENTS_API_KEY: KEY });
    expect(JSON.stringify(config)).not.toContain(KEY);
    expect(inspect(config, { depth: 10 })).not.toContain(KEY);
    expect(Object.values(config.accounts[0] ?? {})).not.toContain(KEY);
  });

  const bad: [string, Record<string, string>, string, string][] = [
    [
      "a non-redis REDIS_URL",
      { REDIS_URL: "http://x" },
      "REDIS_URL",
      "must be a redis:// or rediss:// URL, or redis+cluster:// for a Redis Cluster",
    ],
    [
      "a cluster seed without a port",
      { REDIS_URL: "redis+cluster://10.0.0.1:6379,10.0.0.2" },
      "REDIS_URL",
      "each seed node must be host:port (port 1 to 65535), separated by commas",
    ],
    [
      "a cluster with a database",
      { REDIS_URL: "redis+cluster://10.0.0.1:6379/3" },
      "REDIS_URL",
      "a cluster has one database: leave the path out (or /0)",
    ],
    [
      "a hash tag in the prefix on a cluster",
      { REDIS_URL: "redis+cluster://10.0.0.1:6379", MONEYQ_REDIS_PREFIX: "{moneyq}" },
      "MONEYQ_REDIS_PREFIX",
      "must have no { or } on a Redis Cluster: moneyq gives each account's keys a hash tag of its own (docs/scaling.md)",
    ],
    [
      "an API URL without /v1",
      { PAYMENTS_API_URL: "https://api.example.test/v2", PAYMENTS_API_KEY: KEY },
      "PAYMENTS_API_URL",
      "must be an http(s) URL ending in /v1",
    ],
    [
      "a URL with no key",
      { PAYMENTS_API_URL: URL_V1 },
      "PAYMENTS_API_KEY",
      "required when PAYMENTS_API_URL is set (or configure MONEYQ_ACCOUNTS or MONEYQ_ACCOUNTS_FILE)",
    ],
    [
      "a key with no URL",
      { PAYMENTS_API_KEY: KEY },
      "PAYMENTS_API_URL",
      "required when an API key is configured (unset every key to use the embedded sandbox)",
    ],
    [
      "a malformed key",
      { PAYMENTS_API_URL: URL_V1, PAYMENTS_API_KEY: "sk live CANARY" },
      "PAYMENTS_API_KEY",
      "must be visible ASCII characters (0x21 to 0x7E), with no spaces",
    ],
    [
      "a zero rate",
      { MONEYQ_RATE_LIMIT_PER_SECOND: "0" },
      "MONEYQ_RATE_LIMIT_PER_SECOND",
      "must be a positive whole number",
    ],
    [
      "a fractional concurrency",
      { MONEYQ_CONCURRENCY: "1.5" },
      "MONEYQ_CONCURRENCY",
      "must be a positive whole number",
    ],
    [
      "an unknown log level",
      { MONEYQ_LOG_LEVEL: "loud" },
      "MONEYQ_LOG_LEVEL",
      "must be one of fatal, error, warn, info, debug, trace, silent",
    ],
    [
      "a typo'd variable",
      { MONEYQ_CONCURENCY: "4" },
      "MONEYQ_CONCURENCY",
      "unknown variable (see docs/configuration.md)",
    ],
    [
      "accounts that are not JSON",
      { MONEYQ_ACCOUNTS: "[{alias" },
      "MONEYQ_ACCOUNTS",
      "must be valid JSON (an array of accounts)",
    ],
    [
      "an account with a bad alias",
      {
        PAYMENTS_API_URL: URL_V1,
        MONEYQ_ACCOUNTS: '[{"alias":"Pay Roll","apiKey":"sk_live_12345678"}]',
      },
      "MONEYQ_ACCOUNTS[0].alias",
      "must be 1 to 32 lowercase letters, digits, '-' or '_', starting with a letter",
    ],
    [
      "an account with two keys",
      {
        PAYMENTS_API_URL: URL_V1,
        MONEYQ_ACCOUNTS: '[{"alias":"a","apiKey":"sk_live_12345678","apiKeyEnv":"X"}]',
      },
      "MONEYQ_ACCOUNTS[0]",
      "give exactly one of apiKey, apiKeyEnv or apiKeyRef",
    ],
    [
      "an account whose key variable is unset",
      { PAYMENTS_API_URL: URL_V1, MONEYQ_ACCOUNTS: '[{"alias":"a","apiKeyEnv":"NOPE_KEY"}]' },
      "MONEYQ_ACCOUNTS[0].apiKeyEnv",
      "variable NOPE_KEY is not set",
    ],
    [
      "an account with a zero rate",
      {
        PAYMENTS_API_URL: URL_V1,
        MONEYQ_ACCOUNTS: '[{"alias":"a","apiKey":"sk_live_12345678","ratePerSecond":0}]',
      },
      "MONEYQ_ACCOUNTS[0].ratePerSecond",
      "at least 1",
    ],
    [
      "an alias configured twice",
      {
        PAYMENTS_API_URL: URL_V1,
        PAYMENTS_API_KEY: KEY,
        MONEYQ_ACCOUNTS: `[{"alias":"default","apiKey":"sk_live_12345678"}]`,
      },
      "MONEYQ_ACCOUNTS",
      'alias "default" is configured twice',
    ],
  ];
  it("reads the pipeline's settings, and keeps the webhook secret out of sight", () => {
    const config = loadConfig({
      MONEYQ_MAX_ATTEMPTS: "3",
      MONEYQ_RATE_WINDOW_MARGIN_MS: "0",
      MONEYQ_REQUIRE_SAFE_REDIS: "true",
      MONEYQ_WEBHOOK_URL: "https://hooks.example.test/moneyq",
      MONEYQ_WEBHOOK_SECRET: "CANARY_webhook_secret_0123456789",
    });
    expect(config.pipeline).toMatchObject({
      maxAttempts: 3,
      rateWindowMarginMs: 0,
      confirmDeadlineMs: CONFIG_DEFAULTS.MONEYQ_CONFIRM_DEADLINE_MS,
    });
    expect(config.requireSafeRedis).toBe(true);
    expect(config.webhook).toMatchObject({
      url: "https://hooks.example.test/moneyq",
      allowedRanges: [],
    });
    expect(config.webhook?.secrets).toEqual(["CANARY_webhook_secret_0123456789"]);
    expect(JSON.stringify(config)).not.toContain("CANARY");
    expect(inspect(config, { depth: 10 })).not.toContain("CANARY");
  });

  const WHSEC = `whsec_${Buffer.alloc(24, 1).toString("base64")}`;
  const badPipeline: [string, Record<string, string>, string, string][] = [
    [
      "zero attempts",
      { MONEYQ_MAX_ATTEMPTS: "0" },
      "MONEYQ_MAX_ATTEMPTS",
      "must be a positive whole number",
    ],
    [
      "a negative margin",
      { MONEYQ_RATE_WINDOW_MARGIN_MS: "-5" },
      "MONEYQ_RATE_WINDOW_MARGIN_MS",
      "must be a whole number",
    ],
    [
      "a flag that is not one",
      { MONEYQ_REQUIRE_SAFE_REDIS: "yes" },
      "MONEYQ_REQUIRE_SAFE_REDIS",
      "must be 1, 0, true or false",
    ],
    [
      "a webhook URL without a secret",
      { MONEYQ_WEBHOOK_URL: "https://h.example.test/x" },
      "MONEYQ_WEBHOOK_SECRET",
      "MONEYQ_WEBHOOK_URL and MONEYQ_WEBHOOK_SECRET go together",
    ],
    [
      "a short webhook secret",
      { MONEYQ_WEBHOOK_URL: "https://h.example.test/x", MONEYQ_WEBHOOK_SECRET: "short" },
      "MONEYQ_WEBHOOK_SECRET",
      "secret 1: a webhook secret must be at least 16 characters",
    ],
    [
      "a whsec_ secret that is not base64",
      {
        MONEYQ_WEBHOOK_URL: "https://h.example.test/x",
        MONEYQ_WEBHOOK_SECRET: `${WHSEC} whsec_not_base64_0123456789`,
      },
      "MONEYQ_WEBHOOK_SECRET",
      "secret 2: a whsec_ secret must be whsec_ followed by the base64 of 16 to 64 random bytes",
    ],
    [
      "six secrets at once",
      {
        MONEYQ_WEBHOOK_URL: "https://h.example.test/x",
        MONEYQ_WEBHOOK_SECRET: Array(6).fill(WHSEC).join(" "),
      },
      "MONEYQ_WEBHOOK_SECRET",
      "must hold 1 to 5 secrets, separated by spaces",
    ],
    [
      "a webhook URL that is not http",
      { MONEYQ_WEBHOOK_URL: "ftp://h/x", MONEYQ_WEBHOOK_SECRET: "webhook_secret_0123456789abcdef" },
      "MONEYQ_WEBHOOK_URL",
      "must be an http(s) URL",
    ],
  ];
  it.each(badPipeline)("refuses %s", (_, env, variable, rule) => {
    expect(issuesOf(env)).toContainEqual({ variable, rule });
  });

  it("takes several webhook secrets while rotating, and judges each as the webhooks do", () => {
    const config = loadConfig({
      MONEYQ_WEBHOOK_URL: "https://hooks.example.test/moneyq",
      MONEYQ_WEBHOOK_SECRET: `  ${WHSEC}   an_older_plain_secret_0123 `,
    });
    expect(config.webhook?.secrets).toEqual([WHSEC, "an_older_plain_secret_0123"]);
    // The configuration writes the rule again (it sits below the webhooks): both agree.
    const secrets = [
      WHSEC,
      `whsec_${Buffer.alloc(16, 7).toString("base64")}`,
      `whsec_${Buffer.alloc(16, 7).toString("base64").replace(/=+$/, "")}`,
      `whsec_${Buffer.alloc(15, 7).toString("base64")}`,
      `whsec_${Buffer.alloc(64, 7).toString("base64")}`,
      `whsec_${Buffer.alloc(65, 7).toString("base64")}`,
      `whsec_${"A".repeat(25)}`,
      "whsec_abc-def_ghi-jkl_mno",
      "x".repeat(15),
      "x".repeat(16),
      "x".repeat(512),
      "x".repeat(513),
    ];
    for (const secret of secrets) {
      const env = { MONEYQ_WEBHOOK_URL: "https://h.example.test/x", MONEYQ_WEBHOOK_SECRET: secret };
      let refused = false;
      try {
        loadConfig(env);
      } catch (error) {
        refused = issuesOf(env).some((i) => i.variable === "MONEYQ_WEBHOOK_SECRET");
        expect(error).toBeInstanceOf(ConfigError);
      }
      const problem = secret.length > 512 ? "too long" : webhookSecretProblem(secret);
      expect(refused, secret.slice(0, 40)).toBe(problem !== undefined);
    }
  });

  it.each(bad)("refuses %s, naming the variable and the rule", (_, env, variable, rule) => {
    expect(issuesOf(env)).toContainEqual({ variable, rule });
  });

  const TOKEN = "tok_CANARY_0123456789abcdef";
  const tokens = (entry: Record<string, unknown>) => ({
    MONEYQ_API_TOKENS: JSON.stringify([
      { name: "ops", token: TOKEN, accounts: ["default"], ...entry },
    ]),
  });

  it("gives a token every permission unless it names some, and keeps them frozen", () => {
    const [all] = loadConfig(tokens({})).api.tokens;
    expect(all?.permissions).toEqual([...PERMISSIONS]);
    expect(PERMISSIONS).toEqual(["submit", "approve", "operate", "read"]);
    const [some] = loadConfig(tokens({ permissions: ["read", "submit"] })).api.tokens;
    expect(some?.permissions).toEqual(["submit", "read"]);
    expect(Object.isFrozen(some?.permissions)).toBe(true);
    expect(Object.isFrozen(all?.permissions)).toBe(true);
  });

  const badPermissions: [string, unknown, string][] = [
    [
      "an unknown word",
      ["read", "write"],
      "the value at [1] is not a permission: each must be one of submit, approve, operate, read",
    ],
    ["an empty list", [], "must list at least one permission (leave it out for all four)"],
    ["a permission listed twice", ["operate", "read", "operate"], 'lists "operate" more than once'],
    ["a word instead of a list", "read", "must be an array, got string"],
  ];
  it.each(badPermissions)("refuses a token's permissions with %s", (_, permissions, rule) => {
    expect(issuesOf(tokens({ permissions }))).toEqual([
      { variable: "MONEYQ_API_TOKENS[0].permissions", rule },
    ]);
  });

  it("reads each account's approval policy, and refuses a bad one naming the rule", () => {
    const policies = (list: unknown) => ({ MONEYQ_APPROVAL_POLICIES: JSON.stringify(list) });
    const config = loadConfig(
      policies([{ account: "default", batchesOver: { NGN: "1000.50" }, expiresAfterMs: 60_000 }]),
    );
    expect(config.approvals.get("default")).toEqual({
      allBatches: false,
      batchesOver: { NGN: "1000.50" },
      jobsOver: {},
      expiresAfterMs: 60_000,
      resolutionsBySecondPerson: false,
    });
    expect(issuesOf(policies([{ account: "nobody", batches: "all" }]))).toEqual([
      {
        variable: "MONEYQ_APPROVAL_POLICIES[0].account",
        rule: 'no account "nobody" is configured',
      },
    ]);
    expect(issuesOf(policies([{ account: "default" }]))).toEqual([
      {
        variable: "MONEYQ_APPROVAL_POLICIES[0]",
        rule: "give batches, batchesOver, jobsOver or resolutions",
      },
    ]);
    expect(issuesOf(policies([{ account: "default", batchesOver: { NGN: "1e5" } }]))).toEqual([
      {
        variable: "MONEYQ_APPROVAL_POLICIES[0].batchesOver.NGN",
        rule: 'must be an amount as decimal text, such as "10000.00"',
      },
    ]);
  });

  it("reads each account's velocity limits by currency, and refuses bad ones naming the rule", () => {
    const limits = (list: unknown) => ({ MONEYQ_VELOCITY_LIMITS: JSON.stringify(list) });
    const config = loadConfig(
      limits([
        {
          account: "default",
          currency: "NGN",
          perHour: { amount: "10000.5" },
          perBeneficiaryPerDay: { count: 3 },
        },
      ]),
    );
    expect(config.outflow.velocity.get("default")?.get("NGN")).toEqual({
      perHour: { amount: "10000.5" },
      perDay: undefined,
      perBeneficiaryPerDay: { count: 3 },
    });
    expect(config.outflow.fundsRetryMs).toBeUndefined();
    expect(loadConfig({ MONEYQ_INSUFFICIENT_FUNDS_RETRY: "15m" }).outflow.fundsRetryMs).toBe(
      900_000,
    );
    expect(issuesOf(limits([{ account: "default", currency: "NGN" }]))).toEqual([
      {
        variable: "MONEYQ_VELOCITY_LIMITS[0]",
        rule: "give perHour, perDay or perBeneficiaryPerDay",
      },
    ]);
    expect(issuesOf(limits([{ account: "default", currency: "NGN", perDay: {} }]))).toEqual([
      { variable: "MONEYQ_VELOCITY_LIMITS[0].perDay", rule: "give amount, count or both" },
    ]);
    expect(
      issuesOf(limits([{ account: "default", currency: "ngn", perDay: { amount: "1e5" } }])),
    ).toEqual([
      {
        variable: "MONEYQ_VELOCITY_LIMITS[0].currency",
        rule: "must be a currency code (3 to 10 capital letters)",
      },
      {
        variable: "MONEYQ_VELOCITY_LIMITS[0].perDay.amount",
        rule: 'must be an amount as decimal text, such as "10000.00"',
      },
    ]);
    const twice = { account: "default", currency: "NGN", perDay: { count: 1 } };
    expect(issuesOf(limits([twice, twice]))).toEqual([
      {
        variable: "MONEYQ_VELOCITY_LIMITS[1].currency",
        rule: 'account "default" has NGN limits already',
      },
    ]);
    expect(issuesOf(limits([{ ...twice, account: "nobody" }]))).toEqual([
      { variable: "MONEYQ_VELOCITY_LIMITS[0].account", rule: 'no account "nobody" is configured' },
    ]);
    expect(issuesOf({ MONEYQ_INSUFFICIENT_FUNDS_RETRY: "soon" })).toEqual([
      {
        variable: "MONEYQ_INSUFFICIENT_FUNDS_RETRY",
        rule: "must be off, or a duration such as 90s, 15m, 1h or 3d, at least 1s",
      },
    ]);
  });

  it("reads each account's policy on repeated payments (warn over 7 days by default), and refuses a bad one naming the variable and rule", () => {
    const repeats = (list: unknown) => ({ MONEYQ_PAYMENT_REPEATS: JSON.stringify(list) });
    expect(loadConfig({}).paymentRepeats.size).toBe(0);
    expect(paymentRepeatsOf(loadConfig({}).paymentRepeats, "default")).toEqual({
      policy: "warn",
      windowMs: 7 * 86_400_000,
    });
    const config = loadConfig(repeats([{ account: "default", policy: "hold", windowDays: 3 }]));
    expect(config.paymentRepeats.get("default")).toEqual({
      policy: "hold",
      windowMs: 3 * 86_400_000,
    });
    expect(Object.isFrozen(config.paymentRepeats.get("default"))).toBe(true);
    expect(issuesOf(repeats([{ account: "default", policy: "block" }]))).toEqual([
      {
        variable: "MONEYQ_PAYMENT_REPEATS[0].policy",
        rule: 'must be one of "warn", "hold", "refuse"',
      },
    ]);
    expect(issuesOf(repeats([{ account: "default", policy: "refuse", windowDays: 0 }]))).toEqual([
      {
        variable: "MONEYQ_PAYMENT_REPEATS[0].windowDays",
        rule: "must be more than 0 and at most 90 days",
      },
    ]);
    expect(issuesOf(repeats([{ account: "default", policy: "warn", windowDays: 91 }]))).toEqual([
      {
        variable: "MONEYQ_PAYMENT_REPEATS[0].windowDays",
        rule: "must be more than 0 and at most 90 days",
      },
    ]);
    expect(issuesOf(repeats([{ account: "nobody", policy: "warn" }]))).toEqual([
      { variable: "MONEYQ_PAYMENT_REPEATS[0].account", rule: 'no account "nobody" is configured' },
    ]);
    expect(
      issuesOf(
        repeats([
          { account: "default", policy: "warn" },
          { account: "default", policy: "refuse" },
        ]),
      ),
    ).toEqual([
      {
        variable: "MONEYQ_PAYMENT_REPEATS[1].account",
        rule: 'account "default" has a policy already',
      },
    ]);
    expect(issuesOf({ MONEYQ_PAYMENT_REPEATS: "{" })).toEqual([
      { variable: "MONEYQ_PAYMENT_REPEATS", rule: "must be valid JSON (an array of policies)" },
    ]);
  });

  it("never shows the token beside its permissions, even one pasted among them", () => {
    const config = loadConfig(tokens({ permissions: ["operate"] }));
    expect(JSON.stringify(config.api.tokens)).toBe(
      '[{"name":"ops","accounts":["default"],"permissions":["operate"]}]',
    );
    expect(inspect(config, { depth: 10 })).not.toContain("CANARY");
    const env = tokens({ permissions: ["read", TOKEN] });
    let message = "";
    try {
      loadConfig(env);
    } catch (error) {
      message = `${(error as Error).message} ${inspect(error, { depth: 10 })}`;
    }
    expect(message).toContain(
      "MONEYQ_API_TOKENS[0].permissions: the value at [1] is not a permission",
    );
    expect(message).not.toContain("CANARY");
  });

  it("reports every problem at once, and never a key's value", () => {
    const env = {
      REDIS_URL: "nope",
      PAYMENTS_API_URL: URL_V1,
      PAYMENTS_API_KEY: "sk live CANARY",
      MONEYQ_ACCOUNTS: '[{"alias":"a","apiKey":"short CANARY"}]',
    };
    let message = "";
    try {
      loadConfig(env);
    } catch (error) {
      message = `${(error as Error).message} ${JSON.stringify(error)} ${inspect(error, { depth: 10 })}`;
    }
    expect(message).toContain("REDIS_URL");
    expect(message).toContain("PAYMENTS_API_KEY");
    expect(message).toContain("MONEYQ_ACCOUNTS[0].apiKey");
    expect(message).not.toContain("CANARY");
  });
});

describe("loadConfig: accounts from a file (MONEYQ_ACCOUNTS_FILE, MONEYQ_ACCOUNT_KEYS_FILE)", () => {
  const dir = mkdtempSync(join(tmpdir(), "moneyq-accounts-file-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  /** Writes `content` (JSON unless text) to a file of its own and returns the path. */
  const file = (content: unknown) => {
    const path = join(dir, `file-${++files}.json`);
    writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
    return path;
  };
  const accountsFile = (entries: unknown, keys?: unknown) => ({
    PAYMENTS_API_URL: URL_V1,
    MONEYQ_ACCOUNTS_FILE: file(entries),
    ...(keys !== undefined && { MONEYQ_ACCOUNT_KEYS_FILE: file(keys) }),
  });
  const KEY_RULE = "must be visible ASCII characters (0x21 to 0x7E), with no spaces";

  it("reads the accounts, each key inline, by variable or by name in the keys file", () => {
    const config = loadConfig({
      ...accountsFile(
        [
          { alias: "payroll", apiKeyEnv: "PAYROLL_KEY", ratePerSecond: 10, concurrency: 2 },
          { alias: "market", apiKey: "sk_live_market_456" },
          { alias: "shop-1", apiKeyRef: "shop-1", ratePerSecond: 3 },
          { alias: "shop-2", apiKeyRef: "shared.key" },
        ],
        { "shop-1": "sk_live_shop_1", "shared.key": "sk_live_shared", unused: "not a key at all" },
      ),
      PAYROLL_KEY: "sk_live_payroll_123",
      MONEYQ_CONCURRENCY: "5",
    });
    expect(config.accounts.map((a) => [a.alias, a.apiKey, a.ratePerSecond, a.concurrency])).toEqual(
      [
        ["payroll", "sk_live_payroll_123", 10, 2],
        ["market", "sk_live_market_456", CONFIG_DEFAULTS.MONEYQ_RATE_LIMIT_PER_SECOND, 5],
        ["shop-1", "sk_live_shop_1", 3, 5],
        ["shop-2", "sk_live_shared", CONFIG_DEFAULTS.MONEYQ_RATE_LIMIT_PER_SECOND, 5],
      ],
    );
    expect(JSON.stringify(config)).not.toContain("sk_live_shop_1");
    expect(inspect(config, { depth: 10 })).not.toContain("sk_live_shared");
  });

  it("takes keys by name in MONEYQ_ACCOUNTS too, and keeps aliases unique beside PAYMENTS_API_KEY", () => {
    const config = loadConfig({
      PAYMENTS_API_URL: URL_V1,
      PAYMENTS_API_KEY: KEY,
      MONEYQ_ACCOUNTS: JSON.stringify([{ alias: "payroll", apiKeyRef: "payroll" }]),
      MONEYQ_ACCOUNT_KEYS_FILE: file({ payroll: "sk_live_payroll_123" }),
    });
    expect(config.accounts.map((a) => [a.alias, a.apiKey])).toEqual([
      ["default", KEY],
      ["payroll", "sk_live_payroll_123"],
    ]);
    expect(
      issuesOf({ ...accountsFile([{ alias: "default", apiKey: "k1" }]), PAYMENTS_API_KEY: KEY }),
    ).toEqual([{ variable: "MONEYQ_ACCOUNTS_FILE", rule: 'alias "default" is configured twice' }]);
  });

  it.each<[string, () => Record<string, string>, { variable: string; rule: string }[]]>([
    [
      "a file that does not exist",
      () => ({ PAYMENTS_API_URL: URL_V1, MONEYQ_ACCOUNTS_FILE: join(dir, "none.json") }),
      [{ variable: "MONEYQ_ACCOUNTS_FILE", rule: "cannot read the file (ENOENT)" }],
    ],
    [
      "a directory",
      () => {
        mkdirSync(join(dir, "a-directory"), { recursive: true });
        return { PAYMENTS_API_URL: URL_V1, MONEYQ_ACCOUNTS_FILE: join(dir, "a-directory") };
      },
      [{ variable: "MONEYQ_ACCOUNTS_FILE", rule: "must be the path of a regular file" }],
    ],
    [
      "a file over 32 MiB",
      () => {
        const path = file("");
        truncateSync(path, 32 * 1024 * 1024 + 1);
        return { PAYMENTS_API_URL: URL_V1, MONEYQ_ACCOUNTS_FILE: path };
      },
      [{ variable: "MONEYQ_ACCOUNTS_FILE", rule: "must be a file of at most 32 MiB" }],
    ],
    [
      "a file that is not JSON",
      () => accountsFile('[{"alias":"a","apiKey":"sk_live_CANARY"'),
      [{ variable: "MONEYQ_ACCOUNTS_FILE", rule: "must be valid JSON (an array of accounts)" }],
    ],
    [
      "bad entries",
      () =>
        accountsFile([
          { alias: "a", apiKey: "k1" },
          { alias: "b", apiKey: "k2", concurrency: 0 },
          { alias: "Shop C", apiKey: "k3" },
          { alias: "d", apiKeyRef: "d", apiKeyEnv: "D_KEY" },
          { alias: "e", apiKey: "k5", colour: "blue" },
        ]),
      [
        { variable: "MONEYQ_ACCOUNTS_FILE[1].concurrency", rule: "at least 1" },
        {
          variable: "MONEYQ_ACCOUNTS_FILE[2].alias",
          rule: "must be 1 to 32 lowercase letters, digits, '-' or '_', starting with a letter",
        },
        {
          variable: "MONEYQ_ACCOUNTS_FILE[3]",
          rule: "give exactly one of apiKey, apiKeyEnv or apiKeyRef",
        },
        { variable: "MONEYQ_ACCOUNTS_FILE[4].colour", rule: "unknown field" },
      ],
    ],
    [
      "an entry whose key variable is unset",
      () => accountsFile([{ alias: "a", apiKeyEnv: "NOPE_KEY" }]),
      [{ variable: "MONEYQ_ACCOUNTS_FILE[0].apiKeyEnv", rule: "variable NOPE_KEY is not set" }],
    ],
    [
      "keys by name without the keys file (said once)",
      () =>
        accountsFile([
          { alias: "a", apiKey: "k1" },
          { alias: "b", apiKeyRef: "b" },
          { alias: "c", apiKeyRef: "c" },
        ]),
      [
        {
          variable: "MONEYQ_ACCOUNTS_FILE[1].apiKeyRef",
          rule: "names a key in MONEYQ_ACCOUNT_KEYS_FILE, which is not set",
        },
      ],
    ],
    [
      "a name the keys file does not hold",
      () =>
        accountsFile(
          [
            { alias: "a", apiKeyRef: "a" },
            { alias: "b", apiKeyRef: "toString" },
          ],
          {
            a: "sk_live_a",
          },
        ),
      [
        {
          variable: "MONEYQ_ACCOUNTS_FILE[1].apiKeyRef",
          rule: "names no key in MONEYQ_ACCOUNT_KEYS_FILE",
        },
      ],
    ],
    [
      "a keys file that is not an object of keys",
      () => accountsFile([{ alias: "a", apiKeyRef: "a" }], ["sk_live_CANARY"]),
      [
        {
          variable: "MONEYQ_ACCOUNT_KEYS_FILE",
          rule: 'must be a JSON object of keys by name: {"name":"key"}',
        },
      ],
    ],
    [
      "a keys file that does not exist",
      () => ({
        ...accountsFile([{ alias: "a", apiKeyRef: "a" }]),
        MONEYQ_ACCOUNT_KEYS_FILE: join(dir, "none.json"),
      }),
      [{ variable: "MONEYQ_ACCOUNT_KEYS_FILE", rule: "cannot read the file (ENOENT)" }],
    ],
    [
      "a keys file without a list of accounts",
      () => ({
        PAYMENTS_API_URL: URL_V1,
        PAYMENTS_API_KEY: KEY,
        MONEYQ_ACCOUNT_KEYS_FILE: file({}),
      }),
      [
        {
          variable: "MONEYQ_ACCOUNT_KEYS_FILE",
          rule: "is read only with MONEYQ_ACCOUNTS or MONEYQ_ACCOUNTS_FILE, whose accounts name its keys by apiKeyRef",
        },
      ],
    ],
    [
      "both MONEYQ_ACCOUNTS and MONEYQ_ACCOUNTS_FILE",
      () => ({
        ...accountsFile([{ alias: "a", apiKey: "k1" }]),
        MONEYQ_ACCOUNTS: JSON.stringify([{ alias: "b", apiKey: "k2" }]),
      }),
      [
        {
          variable: "MONEYQ_ACCOUNTS_FILE",
          rule: "must not be set with MONEYQ_ACCOUNTS: list the accounts in one or the other",
        },
      ],
    ],
  ])("refuses %s, naming the variable, the entry and the rule", (_, env, issues) => {
    expect(issuesOf(env())).toEqual(issues);
  });

  it("holds every key from the files to the key rule and the profile's, never showing one", () => {
    /** Every way a refusal may be seen: its message, its JSON and its inspection. */
    const seen = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (error) {
        return `${(error as Error).message} ${JSON.stringify(error)} ${inspect(error, { depth: 10 })}`;
      }
      throw new Error("expected ConfigError");
    };
    const inline = accountsFile([{ alias: "a", apiKey: "sk live CANARY-1" }]);
    expect(issuesOf(inline)).toEqual([
      { variable: "MONEYQ_ACCOUNTS_FILE[0].apiKey", rule: KEY_RULE },
    ]);
    const byVariable = { ...accountsFile([{ alias: "a", apiKeyEnv: "A_KEY" }]), A_KEY: "CANARY 2" };
    expect(issuesOf(byVariable)).toEqual([{ variable: "A_KEY", rule: KEY_RULE }]);
    const byName = accountsFile(
      [
        { alias: "b", apiKeyRef: "b" },
        { alias: "c", apiKeyRef: "c" },
        { alias: "d", apiKeyRef: "d" },
      ],
      { b: "sk_live_CANARY-3\t", c: "clé-CANARY-4", d: 12345678 },
    );
    expect(issuesOf(byName)).toEqual(
      [0, 1, 2].map((i) => ({
        variable: `MONEYQ_ACCOUNTS_FILE[${i}].apiKeyRef`,
        rule: `its key in MONEYQ_ACCOUNT_KEYS_FILE ${KEY_RULE}`,
      })),
    );
    const strict = profileFile({ apiKeyPattern: "^sk_(live|test)_" });
    const loose = {
      ...accountsFile([{ alias: "shop", apiKeyRef: "shop" }], { shop: "pk_CANARY_5" }),
      MONEYQ_PROVIDER_PROFILE: strict,
    };
    expect(issuesOf(loose)).toEqual([
      {
        variable: "MONEYQ_ACCOUNTS_FILE (shop)",
        rule: "must match the provider profile's apiKeyPattern",
      },
    ]);
    for (const env of [inline, byVariable, byName, loose]) {
      expect(seen(env)).not.toContain("CANARY");
      expect(seen(env)).not.toContain("12345678");
    }
  });

  it("reads 10,000 accounts, keys by name in one keys file", () => {
    const count = 10_000;
    const alias = (i: number) => `merchant-${i}`;
    const entries = Array.from({ length: count }, (_, i) => ({
      alias: alias(i),
      apiKeyRef: alias(i),
      ...(i % 2 === 0 && { ratePerSecond: 1 + (i % 97) }),
      ...(i % 3 === 0 && { concurrency: 1 + (i % 7) }),
    }));
    const keys = Object.fromEntries(entries.map((_, i) => [alias(i), `sk_live_${i}_key`]));
    const config = loadConfig(accountsFile(entries, keys));
    expect(config.accounts).toHaveLength(count);
    config.accounts.forEach((a, i) => {
      expect(a.alias).toBe(alias(i));
      expect(a.apiKey).toBe(`sk_live_${i}_key`);
      expect(a.ratePerSecond).toBe(
        i % 2 === 0 ? 1 + (i % 97) : CONFIG_DEFAULTS.MONEYQ_RATE_LIMIT_PER_SECOND,
      );
      expect(a.concurrency).toBe(i % 3 === 0 ? 1 + (i % 7) : CONFIG_DEFAULTS.MONEYQ_CONCURRENCY);
    });
  });
});

describe("loadConfig: traces (the OTEL_* variables)", () => {
  const HEADER_SECRET = "otlp-CANARY-key-42";

  it("leaves tracing off without an OTLP endpoint, whatever else is set", () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_HEADERS: `x-api-key=${HEADER_SECRET}` }).tracing,
    ).toBeUndefined();
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "TRUE" })
        .tracing,
    ).toBeUndefined();
  });

  it("appends /v1/traces to the base endpoint; the traces' own endpoint, headers and protocol win", () => {
    const base = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.test:4318/" });
    expect(base.tracing).toMatchObject({
      endpoint: "https://collector.test:4318/v1/traces",
      protocol: CONFIG_DEFAULTS.OTEL_EXPORTER_OTLP_PROTOCOL,
      serviceName: "moneyq",
      sampler: "parentbased_always_on",
      samplerRatio: 1,
    });
    const own = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.test:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces.test/ingest",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: "a=1,b=2",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "b=3,api-key=with%20space",
      OTEL_SERVICE_NAME: "payouts",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
    }).tracing;
    expect(own).toMatchObject({
      endpoint: "http://traces.test/ingest",
      protocol: "http/json",
      serviceName: "payouts",
      resourceAttributes: { "deployment.environment": "prod" },
      sampler: "parentbased_traceidratio",
      samplerRatio: 0.25,
    });
    expect(own?.headers).toEqual({ a: "1", b: "3", "api-key": "with space" });
    expect(Object.isFrozen(own)).toBe(true);
  });

  it("keeps the export headers out of JSON, inspection and enumeration", () => {
    const config = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector.test:4318",
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${HEADER_SECRET}`,
    });
    expect(config.tracing?.headers.authorization).toBe(`Bearer ${HEADER_SECRET}`);
    expect(JSON.stringify(config)).not.toContain(HEADER_SECRET);
    expect(inspect(config, { depth: 10 })).not.toContain(HEADER_SECRET);
    expect(Object.keys(config.tracing ?? {})).not.toContain("headers");
  });

  it("refuses bad values naming each variable and its rule, never a header's value", () => {
    const issues = issuesOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://user:pass@traces.test/v1/traces",
      OTEL_EXPORTER_OTLP_HEADERS: `${HEADER_SECRET},x=%ZZ`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_TRACES_SAMPLER: "xray",
      OTEL_TRACES_SAMPLER_ARG: "1.5",
      OTEL_SDK_DISABLED: "maybe",
    });
    expect(issues.map((i) => i.variable).sort()).toEqual(
      [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_TRACES_SAMPLER",
        "OTEL_TRACES_SAMPLER_ARG",
        "OTEL_SDK_DISABLED",
      ].sort(),
    );
    const rule = (variable: string) => issues.find((i) => i.variable === variable)?.rule;
    expect(rule("OTEL_EXPORTER_OTLP_ENDPOINT")).toBe("must be an http(s) URL");
    expect(rule("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")).toContain("must not carry credentials");
    expect(rule("OTEL_EXPORTER_OTLP_HEADERS")).toContain("entry 1 must be name=value");
    expect(JSON.stringify(issues)).not.toContain(HEADER_SECRET);
    expect(JSON.stringify(issues)).not.toContain("pass");
  });
});
