/** One queue per upstream account: the provider's rate limit and key are per account (docs/pipeline.md). */
export function accountQueueName(alias: string): string {
  return `payments-${alias}`;
}

/** The alias of the account whose queue is `queueName`. */
export function queueAccount(queueName: string): string {
  return queueName.replace(/^payments-/, "");
}
