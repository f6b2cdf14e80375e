import { Gauge, type Registry } from "prom-client";

/** What a process's account turns report (processors/account-turns.ts). */
export interface TurnReadings {
  /** Accounts this process runs a worker for now. */
  served(): number;
  /** Accounts with work that no process served, at the last look (every process sees the same). */
  waiting(): number;
}

const readers = new WeakMap<Registry, Set<TurnReadings>>();

/**
 * Reports `turns` on `registry`: `moneyq_accounts_served` (summed over the sets of workers a
 * registry has) and `moneyq_accounts_waiting_for_turn` (the largest any reports). Answers how
 * to stop reporting them.
 */
export function reportTurns(registry: Registry, turns: TurnReadings): () => void {
  let set = readers.get(registry);
  if (!set) {
    const all = new Set<TurnReadings>();
    set = all;
    readers.set(registry, all);
    new Gauge({
      name: "moneyq_accounts_served",
      help: "Accounts this process runs a worker for now (only accounts with work have one, at most MONEYQ_MAX_ACTIVE_ACCOUNTS).",
      registers: [registry],
      collect() {
        this.set([...all].reduce((sum, t) => sum + t.served(), 0));
      },
    });
    new Gauge({
      name: "moneyq_accounts_waiting_for_turn",
      help: "Accounts with work due that no worker process serves yet; above 0 for long, the processes are full: add one or raise MONEYQ_MAX_ACTIVE_ACCOUNTS.",
      registers: [registry],
      collect() {
        this.set(Math.max(0, ...[...all].map((t) => t.waiting())));
      },
    });
  }
  set.add(turns);
  return () => set.delete(turns);
}
