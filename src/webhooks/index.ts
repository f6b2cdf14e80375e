/**
 * `moneyq/webhooks`: what a receiver of moneyq's webhooks needs to check them, and nothing
 * else. It loads no dependency beyond Node's own modules.
 */
export {
  DEFAULT_TOLERANCE_SECONDS,
  EVENT_ID_HEADER,
  MIN_SECRET_LENGTH,
  SIGNATURE_HEADER,
  verifyWebhook,
  WebhookArgumentError,
  WebhookSecretError,
} from "./webhook-signature.js";
