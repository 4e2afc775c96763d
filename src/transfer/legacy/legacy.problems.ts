import { AppError, type FieldProblem } from "../../core/errors";
import type { Counts, Kind } from "./legacy.schemas";

// What a refused legacy file answers: every problem found (up to MAX_PROBLEMS), one status.

/** At most this many problems are listed in one answer. */
export const MAX_PROBLEMS = 100;

type Severity = "validation_failed" | "invalid_parent" | "invalid_reference";
export interface Problem extends FieldProblem {
  code: Severity;
}

/** Where a record (and one of its fields) sits in the file, for error paths. */
export type Locate = (kind: Kind, index: number, field?: string) => string;

export const zeroCounts = (): Counts => ({ folders: 0, lists: 0, tasks: 0, recurrences: 0, habits: 0, countdowns: 0, memos: 0 });

export function rejectWith(problems: Problem[]): never {
  const code: Severity = problems.some((p) => p.code === "validation_failed")
    ? "validation_failed"
    : problems.some((p) => p.code === "invalid_parent")
      ? "invalid_parent"
      : "invalid_reference";
  const listed = problems.slice(0, MAX_PROBLEMS).map(({ path, message }) => ({ path, message }));
  const more = problems.length > MAX_PROBLEMS ? ` (first ${MAX_PROBLEMS} of ${problems.length} listed)` : "";
  throw new AppError(code, `the file was not restored: ${problems.length} problem(s)${more}; first: ${listed[0]!.path}: ${listed[0]!.message}`, { errors: listed });
}
