import { Command } from "commander";
import { CliError } from "./cli-error.js";
import { EXIT } from "./exit-codes.js";
import { intOption } from "./int-option.js";
import { withOperator } from "./operator.js";
import { printList } from "./print-output.js";
import { runAction } from "./run-action.js";

/** `moneyq webhooks status|failed|redeliver|resume`: the webhook endpoint and deliveries that gave up. */
export function webhooksCommand(): Command {
  const command = new Command("webhooks").description(
    "the webhook endpoint's state, and deliveries that gave up",
  );
  command
    .command("status")
    .description("whether deliveries are stopped (the receiver answered 410 Gone)")
    .action(
      runAction(async () =>
        withOperator(async (op) => {
          const stop = await op.webhooks.stopped();
          process.stdout.write(stop ? `stopped since ${stop.goneAt} (410 Gone)\n` : "delivering\n");
          return EXIT.ok;
        }),
      ),
    );
  command
    .command("failed")
    .description("the newest deliveries that gave up, of every account")
    .option("--limit <n>", "how many", intOption(1, 10_000), 100)
    .option("--json", "one JSON object per line", false)
    .action(
      runAction(async (flags: { limit: number; json: boolean }) =>
        withOperator(async (op) => {
          const list = await op.webhooks.failed(flags.limit);
          printList(
            list,
            flags.json,
            (d) =>
              `${d.eventId}  ${d.account ?? "-"}  ${d.jobId ?? "-"}  ${d.attempts} attempts  ${d.reason}`,
            "failed deliveries",
          );
          return EXIT.ok;
        }),
      ),
    );
  command
    .command("redeliver")
    .description("send deliveries that gave up again, with a new schedule of attempts")
    .argument("<event-id...>")
    .action(
      runAction(async (eventIds: string[]) =>
        withOperator(async (op) => {
          const refused: string[] = [];
          for (const eventId of eventIds) {
            const outcome = await op.webhooks.redeliver(eventId);
            if (outcome === "redelivered") process.stdout.write(`${eventId} redelivered\n`);
            else
              refused.push(
                `${eventId}: ${outcome === "not_found" ? "no such delivery" : "has not failed"}`,
              );
          }
          if (refused.length > 0) throw new CliError(refused.join("; "));
          return EXIT.ok;
        }),
      ),
    );
  command
    .command("resume")
    .description("resume deliveries stopped by a 410 Gone, the held ones first")
    .action(
      runAction(async () =>
        withOperator(async (op) => {
          await op.webhooks.resume();
          process.stdout.write("delivering\n");
          return EXIT.ok;
        }),
      ),
    );
  return command;
}
