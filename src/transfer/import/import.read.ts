import { isUtf8 } from "node:buffer";
import { invalidFile, type Plan } from "./import.plan";
import type { ImportFormat } from "./import.schemas";

/**
 * The file as a plan, by its format (a 422 import_invalid with line numbers when it cannot be read
 * as one). Each reader is loaded on its first use: ical.js alone takes longer to load than a
 * thousand TickTick rows take to read, and a TickTick import has no use for it. `reminderTime`
 * (the user's, HH:MM) is what a repeating all-day task's reminders count from.
 */
export async function readPlan(format: ImportFormat, bytes: Uint8Array, fileName: string, timezone: string, now: Date, reminderTime = "09:00"): Promise<Plan> {
  switch (format) {
    case "ticktick":
      if (!isUtf8(bytes)) invalidFile("a TickTick backup CSV", "the file is not UTF-8 text");
      return (await import("./ticktick")).readTickTick(bytes, timezone, reminderTime);
    case "ics":
      if (!isUtf8(bytes)) invalidFile("an iCalendar file", "the file is not UTF-8 text (RFC 5545 §3.1.4)");
      return (await import("./ics")).readIcs(new TextDecoder().decode(bytes), fileName, timezone, reminderTime);
    case "todoist":
      return (await import("./todoist")).readTodoist(bytes, fileName, timezone, now);
  }
}
