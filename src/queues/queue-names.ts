import { accountTag, type Keyspace } from "../redis/keys.js";

/**
 * One queue per upstream account: the provider's rate limit and key are per account
 * (docs/pipeline.md). On a cluster the name carries the account's hash tag, so the queue's
 * keys share the slot of the account's other keys.
 */
export function accountQueueName(space: Keyspace, alias: string): string {
  return `payments-${accountTag(space, alias)}`;
}

/** The alias of the account whose queue is `queueName`. */
export function queueAccount(queueName: string): string {
  return queueName.replace(/^payments-/, "").replace(/^\{(.*)\}$/, "$1");
}
