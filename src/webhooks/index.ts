/**
 * `moneyq/webhooks`: what a receiver of moneyq's webhooks needs to check them, and nothing
 * else. It loads no dependency beyond Node's own modules.
 */
export {
  DEFAULT_TOLERANCE_SECONDS,
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
  WebhookArgumentError,
} from "./moneyq-signature.js";
export {
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  type WebhookBody,
  type WebhookCheck,
  type WebhookFailure,
  type WebhookHeaders,
} from "./standard-signature.js";
export { checkWebhook, type VerifyOptions, verifyWebhook } from "./verify-webhook.js";
export {
  MIN_SECRET_LENGTH,
  STANDARD_SECRET_PREFIX,
  WebhookSecretError,
} from "./webhook-secret.js";
