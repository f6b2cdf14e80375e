// Signed result webhooks: URL, secrets (several while rotating), private ranges allowed.
import ipaddr from "ipaddr.js";
import { z } from "zod";
import { allowedRangeProblem, blockedWebhookHost } from "../net/address-guard.js";
import type { ConfigIssue, EnvReader } from "./env-reader.js";
import { matching } from "./rules.js";

export interface WebhookConfig {
  readonly url: string;
  /**
   * Every deliveries' signing secret, in the order configured (several while rotating);
   * non-enumerable, like API keys.
   */
  readonly secrets: readonly string[];
  /**
   * CIDR ranges a webhook may reach although they are not public unicast (loopback, private,
   * link-local...): MONEYQ_WEBHOOK_ALLOW_PRIVATE, for local development. Empty by default.
   */
  readonly allowedRanges: readonly string[];
}

/** Secrets configured at once: a rotation needs two; more is a mistake to show. */
const MAX_WEBHOOK_SECRETS = 5;

/**
 * One secret, or several separated by spaces while rotating: each delivery is signed with all.
 * A secret is `whsec_` and the base64 of its key (Standard Webhooks), or 16 or more characters.
 */
const webhookSecrets = z
  .string()
  .transform((v) => v.split(/\s+/).filter((s) => s !== ""))
  .superRefine((secrets, ctx) => {
    if (secrets.length === 0 || secrets.length > MAX_WEBHOOK_SECRETS)
      ctx.addIssue({
        code: "custom",
        message: `must hold 1 to ${MAX_WEBHOOK_SECRETS} secrets, separated by spaces`,
      });
    secrets.forEach((secret, i) => {
      const problem = webhookSecretRule(secret);
      if (problem !== undefined)
        ctx.addIssue({ code: "custom", message: `secret ${i + 1}: ${problem}` });
    });
  });

/**
 * What src/webhooks/webhook-secret.ts checks, written again here because the configuration
 * sits below the webhooks (test/service/config.test.ts holds the two to the same answers).
 */
function webhookSecretRule(secret: string): string | undefined {
  if (secret.length > 512) return "a webhook secret must be at most 512 characters";
  if (!secret.startsWith("whsec_"))
    return secret.length < 16 ? "a webhook secret must be at least 16 characters" : undefined;
  const encoded = /^whsec_([A-Za-z0-9+/]+)={0,2}$/.exec(secret)?.[1] ?? "";
  const bytes = encoded.length % 4 === 1 ? 0 : Math.floor((encoded.length * 3) / 4);
  return bytes < 16 || bytes > 64
    ? "a whsec_ secret must be whsec_ followed by the base64 of 16 to 64 random bytes"
    : undefined;
}

/** Signed result webhooks: a URL and a secret together, or neither. */
export function readWebhook(read: EnvReader): WebhookConfig | undefined {
  const webhookUrl = read.check(
    "MONEYQ_WEBHOOK_URL",
    matching(/^https?:\/\/\S+$/, "must be an http(s) URL"),
    undefined,
  );
  const webhookSecret = read.check("MONEYQ_WEBHOOK_SECRET", webhookSecrets, undefined);
  if ((webhookUrl === undefined) !== (webhookSecret === undefined)) {
    read.issues.push({
      variable: webhookUrl === undefined ? "MONEYQ_WEBHOOK_URL" : "MONEYQ_WEBHOOK_SECRET",
      rule: "MONEYQ_WEBHOOK_URL and MONEYQ_WEBHOOK_SECRET go together",
    });
  }
  const allowedRanges = cidrList(
    "MONEYQ_WEBHOOK_ALLOW_PRIVATE",
    read.text("MONEYQ_WEBHOOK_ALLOW_PRIVATE"),
    read.issues,
  );
  const urlProblem =
    webhookUrl === undefined ? undefined : webhookUrlProblem(webhookUrl, allowedRanges);
  if (urlProblem !== undefined)
    read.issues.push({ variable: "MONEYQ_WEBHOOK_URL", rule: urlProblem });
  return webhookUrl !== undefined && webhookSecret !== undefined
    ? webhookConfig(webhookUrl, webhookSecret, allowedRanges)
    : undefined;
}

/**
 * What the webhooks would refuse at their start, refused here instead, before anything connects:
 * a URL that does not parse, or whose host is an address the address guard blocks (a host name
 * is judged when each delivery resolves it).
 */
function webhookUrlProblem(url: string, allowedRanges: readonly string[]): string | undefined {
  if (!URL.canParse(url)) return "must be an http(s) URL";
  const blocked = blockedWebhookHost(url, allowedRanges);
  if (blocked === undefined) return undefined;
  return `${blocked}: webhooks go only to public addresses, unless MONEYQ_WEBHOOK_ALLOW_PRIVATE lists its range (local development)`;
}

function webhookConfig(
  url: string,
  secrets: readonly string[],
  allowedRanges: readonly string[],
): WebhookConfig {
  const entry = { url, allowedRanges: Object.freeze([...allowedRanges]) } as WebhookConfig;
  Object.defineProperty(entry, "secrets", {
    value: Object.freeze([...secrets]),
    enumerable: false,
  });
  return Object.freeze(entry);
}

/**
 * A comma-separated list of CIDR ranges (`127.0.0.0/8, fd00::/8`), each in its canonical
 * form; each bad entry is an issue that names it.
 */
function cidrList(variable: string, value: string | undefined, issues: ConfigIssue[]): string[] {
  const ranges: string[] = [];
  const whole = (value ?? "").trim().toLowerCase();
  // The switch this variable once was: off is an empty list; on opened every private range.
  if (whole === "0" || whole === "false") return ranges;
  if (whole === "1" || whole === "true") {
    issues.push({
      variable,
      rule: `is no longer a switch ("${value?.trim()}"): it takes a comma-separated list of the CIDR ranges to allow, such as 127.0.0.0/8,::1/128`,
    });
    return ranges;
  }
  for (const entry of (value ?? "").split(",").map((e) => e.trim())) {
    if (entry === "") continue;
    if (!ipaddr.IPv4.isValidCIDRFourPartDecimal(entry) && !ipaddr.IPv6.isValidCIDR(entry)) {
      issues.push({
        variable,
        rule: `"${entry}" is not a CIDR range: give ranges like 127.0.0.0/8 or fd00::/8, comma-separated`,
      });
      continue;
    }
    const problem = allowedRangeProblem(entry);
    if (problem !== undefined) {
      issues.push({ variable, rule: `"${entry}" is refused: ${problem}` });
      continue;
    }
    const [address, bits] = ipaddr.parseCIDR(entry);
    ranges.push(`${address.toString()}/${bits}`);
  }
  return ranges;
}
