import type { FieldProblem } from "../../core/errors";

/** The rules of a reminder's shape, pure: the API (reminders.service.ts) and the backup's records check them alike. */
export type TargetKind = "task" | "habit" | "countdown";
/** At most this many reminders per target (the API and the importers). */
export const REMINDERS_PER_TARGET = 10;
export type ReminderKindName = "before_due" | "at" | "daily" | "days_before";
export type ReminderFieldName = "minutes_before" | "at" | "time" | "days_before";

/** Which kinds a target takes. */
export const KINDS: Record<TargetKind, ReminderKindName[]> = { task: ["before_due", "at"], habit: ["daily"], countdown: ["days_before"] };
/** The fields each kind uses; the others must be absent (null in a record). */
export const FIELDS: Record<ReminderKindName, ReminderFieldName[]> = {
  before_due: ["minutes_before"],
  at: ["at"],
  daily: ["time"],
  days_before: ["days_before", "time"],
};

/** What is wrong with a reminder of `kind` on a `type` target carrying these fields (absent: undefined or null). */
export function reminderShapeProblems(type: TargetKind, kind: ReminderKindName, fields: Partial<Record<ReminderFieldName, unknown>>): FieldProblem[] {
  if (!KINDS[type].includes(kind)) return [{ path: "kind", message: `a ${type} takes ${KINDS[type].join(" or ")} reminders` }];
  const out: FieldProblem[] = [];
  const wanted = FIELDS[kind];
  for (const k of ["minutes_before", "at", "time", "days_before"] as const) {
    const has = fields[k] !== undefined && fields[k] !== null;
    if (wanted.includes(k) && !has) out.push({ path: k, message: `required for a ${kind} reminder` });
    if (!wanted.includes(k) && has) out.push({ path: k, message: `not used by a ${kind} reminder` });
  }
  return out;
}
