import {
  checkListAnswer,
  checkRateAnswer,
  checkRecordAnswer,
  type OperationCheck,
  type Reader,
} from "../provider/check-answer.js";
import {
  type AnswerOperation,
  LIST_OPERATIONS,
  type ListOperation,
  LOOKUP_OPERATIONS,
  RATE_OPERATIONS,
  type RateOperation,
} from "../provider/profile.js";
import { refusalMeaning } from "../provider/refusals.js";
import { JOB_KINDS } from "../queues/job-kinds.js";
import type { SavedAnswer } from "./saved-answers.js";

const LOOKUPS: readonly string[] = Object.values(LOOKUP_OPERATIONS);

/** What the pipeline reads of an operation's answer: a looked-up submission's id, every status. */
function needsOf(operation: AnswerOperation): { id: boolean; status: boolean } {
  if (LOOKUPS.includes(operation)) return { id: false, status: true };
  const looked = Object.values(JOB_KINDS).some(
    (s) => s.operation === operation && s.lookup !== "none",
  );
  return { id: looked, status: looked };
}

/** What moneyq makes of a saved refusal (read as a 200 carrying the error envelope). */
function checkRefusal(
  reader: Reader,
  saved: Extract<SavedAnswer, { refusal: string }>,
): OperationCheck {
  const refusal = {
    operation: saved.operation,
    status: 200,
    code: saved.code,
    message: saved.refusal,
  };
  let meaning: string;
  try {
    meaning = refusalMeaning(reader.profile, refusal, reader.adapter) ?? "refused";
  } catch (error) {
    meaning = `unreadable (${(error as Error).message})`;
  }
  return {
    operation: saved.operation,
    label: `${saved.operation} (${saved.file})`,
    found: [`a refusal, "${saved.refusal}": read as ${meaning}`],
    problems: [],
    notVerified: [],
    warnings: [],
    verified: [],
  };
}

/** One saved answer, checked as the real answer of its operation it is. */
function checkSaved(reader: Reader, saved: SavedAnswer): OperationCheck {
  if ("refusal" in saved) return checkRefusal(reader, saved);
  const { operation, data, file } = saved;
  let check: OperationCheck;
  if (operation in LIST_OPERATIONS)
    check = checkListAnswer(reader, operation as ListOperation, data);
  else if ((RATE_OPERATIONS as readonly string[]).includes(operation))
    check = checkRateAnswer(reader, operation as RateOperation, data);
  else
    check = checkRecordAnswer(
      reader,
      operation as AnswerOperation,
      data,
      needsOf(operation as AnswerOperation),
    );
  const bare = saved.bare
    ? ["the file is not the spec's envelope: it was read as the answer's data"]
    : [];
  return { ...check, label: `${operation} (${file})`, warnings: [...check.warnings, ...bare] };
}

/** `--answers DIR`: every saved answer checked offline, as the pipeline would read it. */
export function checkSavedAnswers(reader: Reader, saved: readonly SavedAnswer[]): OperationCheck[] {
  return saved.map((s) => checkSaved(reader, s));
}
