import { isUtf8 } from "node:buffer";
import { invalidFile, PlanBuilder, type Plan, type PlanSink, type PlanSummary } from "./import.plan";
import type { ImportFormat } from "./import.schemas";

/**
 * The file as a plan, by its format (a 422 import_invalid with line numbers when it cannot be read
 * as one). Each reader is loaded on its first use: ical.js alone takes longer to load than a
 * thousand TickTick rows take to read, and a TickTick import has no use for it. `reminderTime`
 * (the user's, HH:MM) is what a repeating all-day task's reminders count from.
 *
 * The plan keeps the tree of the tasks, not the tasks (bounded memory: a few bytes per task while
 * the import writes); `replay` reads the same bytes again with the same reader, synchronously,
 * handing each task and memo to the import's writer (import.write.ts) as it is read.
 */
export async function readPlan(format: ImportFormat, bytes: Uint8Array, fileName: string, timezone: string, now: Date, reminderTime = "09:00"): Promise<Plan> {
  let read: (plan: PlanBuilder) => PlanSummary;
  switch (format) {
    case "ticktick": {
      if (!isUtf8(bytes)) invalidFile("a TickTick backup CSV", "the file is not UTF-8 text");
      const { readTickTick } = await import("./ticktick");
      read = (plan) => readTickTick(bytes, timezone, reminderTime, plan);
      break;
    }
    case "ics": {
      if (!isUtf8(bytes)) invalidFile("an iCalendar file", "the file is not UTF-8 text (RFC 5545 §3.1.4)");
      const { readIcs } = await import("./ics");
      read = (plan) => readIcs(new TextDecoder().decode(bytes), fileName, timezone, reminderTime, plan);
      break;
    }
    case "todoist": {
      const { readTodoist } = await import("./todoist");
      read = (plan) => readTodoist(bytes, fileName, timezone, now, plan);
      break;
    }
  }
  const summary = read(new PlanBuilder());
  return { ...summary, replay: (sink: PlanSink) => void read(new PlanBuilder(sink)) };
}
