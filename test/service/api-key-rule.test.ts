import { describe, expect, it } from "vitest";
import { PaymentsClient } from "../../src/client/payments-client.js";
import { ConfigError, loadConfig } from "../../src/config/load-config.js";

const URL_V1 = "https://pay.example/v1";
const RULE = "must be visible ASCII characters (0x21 to 0x7E), with no spaces";

function issuesOf(env: Record<string, string>) {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).issues;
  }
  throw new Error("the configuration was accepted");
}

/** Keys the HTTP client cannot send, or sends other than as written. */
const REFUSED = ["ключ-1", "clé-de-test", "key\twith-tab", "emoji-😀", "with space"];

describe("an API key is visible ASCII, checked when the configuration is read", () => {
  it.each(REFUSED)("PAYMENTS_API_KEY %j is refused naming the variable", (key) => {
    const issues = issuesOf({ PAYMENTS_API_URL: URL_V1, PAYMENTS_API_KEY: key });
    expect(issues).toEqual([{ variable: "PAYMENTS_API_KEY", rule: RULE }]);
    expect(JSON.stringify(issues)).not.toContain(key);
  });

  it.each(REFUSED)("MONEYQ_ACCOUNTS[1].apiKey %j is refused naming the entry", (key) => {
    const issues = issuesOf({
      PAYMENTS_API_URL: URL_V1,
      MONEYQ_ACCOUNTS: JSON.stringify([
        { alias: "alpha", apiKey: "sk_live_alpha_0001" },
        { alias: "beta", apiKey: key },
      ]),
    });
    expect(issues).toEqual([{ variable: "MONEYQ_ACCOUNTS[1].apiKey", rule: RULE }]);
  });

  it("every key the configuration accepts, the client accepts too", () => {
    const key = "sk_live_!#$%&'()*+,-./:;<=>?@[]^_`{|}~0123456789";
    const config = loadConfig({ PAYMENTS_API_URL: URL_V1, PAYMENTS_API_KEY: key });
    const client = new PaymentsClient({
      baseUrl: URL_V1,
      apiKey: (config.accounts[0] as { apiKey: string }).apiKey,
    });
    return client.close();
  });
});
