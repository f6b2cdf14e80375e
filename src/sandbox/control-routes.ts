import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { Currency, TransactionStatus } from "../contract/enums.js";
import { formatFieldIssues, validate } from "../contract/field-issues.js";
import { dateTimeWithOffset, limitedAmount, narration } from "../contract/primitives.js";
import { FaultSettings } from "./faults.js";
import { REVERSAL_STYLES } from "./options.js";
import type { SandboxControl } from "./sandbox-control.js";
import { SandboxError } from "./sandbox-error.js";

export const CONTROL_PATH = "/__sandbox";

const CreateAccount = z.strictObject({
  accountId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .optional(),
  name: z.string().min(1).max(100).optional(),
  apiKey: z.string().min(12).max(200).optional(),
  balances: z.partialRecord(Currency, z.number().min(0)).optional(),
  stableBalance: z
    .string()
    .regex(/^\d+(\.\d{1,6})?$/)
    .optional(),
  faults: FaultSettings.optional(),
});
/** The longest a control call moves or waits on the sandbox's clock: a year. */
const YEAR_MS = 365 * 24 * 3600 * 1000;
const Advance = z.strictObject({ ms: z.int().min(0).max(YEAR_MS) });
const Reverse = z.strictObject({
  afterMs: z.int().min(0).max(YEAR_MS).optional(),
  as: z.enum(REVERSAL_STYLES).optional(),
});
const EditTransaction = z
  .strictObject({
    status: TransactionStatus.optional(),
    amount: limitedAmount.optional(),
    currency: Currency.optional(),
    createdAt: dateTimeWithOffset.optional(),
    hidden: z.boolean().optional(),
  })
  .refine((e) => Object.values(e).some((v) => v !== undefined), {
    message: "give at least one of status, amount, currency, createdAt, hidden",
  });
const ExternalDebit = z.strictObject({
  amount: limitedAmount,
  currency: Currency,
  status: TransactionStatus.optional(),
  channel: z.enum(["bank", "mobile_money"]).optional(),
  createdAt: dateTimeWithOffset.optional(),
  narration: narration.optional(),
});
const Transfer = z.strictObject({ amount: z.number().gt(0) });
const TopUp = z.strictObject({ amount: limitedAmount, currency: Currency });
const PaymentLink = z.strictObject({ accountId: z.string().min(1), offerId: z.string().min(1) });
/** The request log and the edit log, optionally of one account and after a sequence number. */
const LogQuery = z.strictObject({
  accountId: z.string().optional(),
  afterSeq: z.coerce.number<number>().int().min(0).optional(),
});
/** Ledger and invariants, optionally of one account. */
const LedgerQuery = z.strictObject({ accountId: z.string().optional() });

function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = validate(schema, value ?? {});
  if (!result.success) {
    throw new SandboxError(400, "validation_error", formatFieldIssues(result.issues), {
      errors: result.issues,
    });
  }
  return result.data;
}

const ok = (data: unknown) => ({ success: true, message: "ok", data });

/**
 * The control API, outside /v1: what tests and users need to steer the sandbox. It has no
 * authentication: the sandbox is a local tool and listens on loopback by default.
 */
export function registerControlRoutes(app: FastifyInstance, control: SandboxControl): void {
  const base = CONTROL_PATH;
  app.get(`${base}/health`, async () => ok({ status: "ok", now: control.state.clock.iso() }));
  app.get(`${base}/accounts`, async () => ok({ accounts: control.accounts() }));
  app.post(`${base}/accounts`, async (req) =>
    ok(control.createAccount(parse(CreateAccount, req.body))),
  );
  app.put<{ Params: { accountId: string } }>(`${base}/accounts/:accountId/faults`, async (req) =>
    ok(control.setFaults(req.params.accountId, parse(FaultSettings, req.body))),
  );
  app.delete<{ Params: { accountId: string } }>(
    `${base}/accounts/:accountId/faults`,
    async (req) => {
      control.clearFaults(req.params.accountId);
      return ok({ accountId: req.params.accountId, faults: null });
    },
  );
  app.post(`${base}/clock/advance`, async (req) =>
    ok(control.advanceClock(parse(Advance, req.body).ms)),
  );
  app.get(`${base}/ledger`, async (req) => {
    const { accountId } = parse(LedgerQuery, req.query);
    return ok({ entries: control.ledger(accountId) });
  });
  app.get(`${base}/invariants`, async (req) => {
    const { accountId } = parse(LedgerQuery, req.query);
    const violations = control.invariantViolations(accountId);
    return ok({ ok: violations.length === 0, violations });
  });
  app.get(`${base}/requests`, async (req) => ok({ requests: control.requests(logFilter(req)) }));
  registerBooksRoutes(app, control);
  app.post<{ Params: { accountNumber: string } }>(
    `${base}/virtual-accounts/:accountNumber/transfers`,
    async (req) =>
      ok(control.receiveTransfer(req.params.accountNumber, parse(Transfer, req.body).amount)),
  );
  app.post(`${base}/payment-links`, async (req) => {
    const { accountId, offerId } = parse(PaymentLink, req.body);
    return ok(control.createPaymentLink(accountId, offerId));
  });
  app.get(`${base}/offers`, async () => ok({ offers: control.offers() }));
}

/** Changes to the provider's books that no /v1 request made: reversals, hand edits, other systems. */
function registerBooksRoutes(app: FastifyInstance, control: SandboxControl): void {
  const base = CONTROL_PATH;
  type ById = { Params: { transactionId: string } };
  app.post<ById>(`${base}/transactions/:transactionId/reverse`, async (req) =>
    ok(control.reverseTransaction(req.params.transactionId, parse(Reverse, req.body))),
  );
  app.patch<ById>(`${base}/transactions/:transactionId`, async (req) =>
    ok(control.editTransaction(req.params.transactionId, parse(EditTransaction, req.body))),
  );
  app.post<{ Params: { accountId: string } }>(
    `${base}/accounts/:accountId/external-debits`,
    async (req) => ok(control.externalDebit(req.params.accountId, parse(ExternalDebit, req.body))),
  );
  app.post<{ Params: { accountId: string } }>(`${base}/accounts/:accountId/top-ups`, async (req) =>
    ok(control.topUp(req.params.accountId, parse(TopUp, req.body))),
  );
  app.get(`${base}/edits`, async (req) => ok({ edits: control.edits(logFilter(req)) }));
}

/** A numbered log's filter (sandbox/numbered-log.ts), from the query: an account, a number. */
function logFilter(req: FastifyRequest): { accountId?: string; afterSeq?: number } {
  const q = parse(LogQuery, req.query);
  return {
    ...(q.accountId !== undefined && { accountId: q.accountId }),
    ...(q.afterSeq !== undefined && { afterSeq: q.afterSeq }),
  };
}
