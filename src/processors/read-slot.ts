import { setTimeout as sleep } from "node:timers/promises";
import type { Lane } from "../queues/lanes.js";
import type { Clearance, RateGate } from "./rate-gate.js";

/**
 * What a request that belongs to no job (a provider check's read, a re-check of a payout, a
 * sweep's page of the provider's list) got of its account's rate: a slot to leave in now, or
 * why not (an operator's pause, a 429's pause and how long, a slot it woke up too late for, a
 * bulk request making room for waiting lookups and urgent jobs).
 */
export type ReadSlot =
  | { readonly send: true }
  | { readonly send: false; readonly held: true }
  | { readonly send: false; readonly pausedMs: number }
  | { readonly send: false; readonly late: true }
  | { readonly send: false; readonly yielded: true };

export interface ReadSlotRequest {
  readonly account: string;
  readonly perSecond: number;
  readonly lane: Lane;
  /** The account's queue (`<prefix>:<queue>`): a bulk request sees who waits there. */
  readonly queueKey?: string | undefined;
  /** 2 for a request that may leave late (a new process's first ones). */
  readonly weight?: number;
  /** How late after its slot a request may still leave: half the rate window's margin. */
  readonly toleranceMs: number;
}

/** Until `at` on this process's clock (a slot's time, as the gate maps it). */
async function sleepUntil(at: number): Promise<void> {
  const ms = at - performance.now();
  if (ms >= 1) await sleep(Math.ceil(ms));
}

/**
 * Takes one slot of the account's rate for a request without a job: waits for it (clearing it
 * on the way when the gate says so), and answers whether the request may leave now. Never
 * leaves inside a pause; the caller decides what a pause, a late wake-up or a yield costs it.
 */
export async function takeReadSlot(gate: RateGate, request: ReadSlotRequest): Promise<ReadSlot> {
  const { account, perSecond, lane, queueKey, weight = 1, toleranceMs } = request;
  for (;;) {
    const slot = await gate.reserve(account, perSecond, weight, undefined, {
      lane,
      ...(queueKey !== undefined && { queueKey }),
    });
    if (!slot.reserved) {
      if ("retryInMs" in slot) {
        await sleep(slot.retryInMs);
        continue;
      }
      if ("pausedMs" in slot) return { send: false, pausedMs: slot.pausedMs };
      if ("held" in slot) return { send: false, held: true };
      if ("yielded" in slot) return { send: false, yielded: true };
      // The other answers concern a job's lock, batch or "sent" record, which a read has none of.
      throw new Error(`the rate gate answered ${JSON.stringify(slot)} for a request without a job`);
    }
    let clearance: Clearance = { clear: true };
    if (slot.clearAt !== undefined) {
      await sleepUntil(slot.clearAt);
      clearance = await gate.clear(account, slot.at, lane === "bulk");
    }
    if (clearance.clear) {
      await sleepUntil(slot.leaveAt);
      return performance.now() - slot.leaveAt <= toleranceMs
        ? { send: true }
        : { send: false, late: true };
    }
    if ("held" in clearance) return { send: false, held: true };
    if ("pausedMs" in clearance) return { send: false, pausedMs: clearance.pausedMs };
    // A bulk slot a lookup or urgent request took: ask again.
    if ("taken" in clearance) continue;
    return { send: false, late: true };
  }
}
