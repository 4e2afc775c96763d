import { isUtf8 } from "node:buffer";
import { readIcs } from "./ics";
import { invalidFile, type Plan } from "./import.plan";
import type { ImportFormat } from "./import.schemas";
import { readTickTick } from "./ticktick";
import { readTodoist } from "./todoist";

/** The file as a plan, by its format (a 422 import_invalid with line numbers when it cannot be read as one). */
export function readPlan(format: ImportFormat, bytes: Uint8Array, fileName: string, timezone: string, now: Date): Plan {
  switch (format) {
    case "ticktick":
      if (!isUtf8(bytes)) invalidFile("a TickTick backup CSV", "the file is not UTF-8 text");
      return readTickTick(bytes, timezone);
    case "ics":
      if (!isUtf8(bytes)) invalidFile("an iCalendar file", "the file is not UTF-8 text (RFC 5545 §3.1.4)");
      return readIcs(new TextDecoder().decode(bytes), fileName, timezone);
    case "todoist":
      return readTodoist(bytes, fileName, timezone, now);
  }
}
