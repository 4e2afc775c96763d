import { z } from "zod";
import { pageQueryShape } from "../../core/pagination";
import { Task } from "./tasks.schemas";

export const VIEW_NAMES = ["today", "overdue", "tomorrow", "next_7_days", "upcoming", "no_date", "completed"] as const;
export const ViewName = z.enum(VIEW_NAMES, { error: `view must be one of ${VIEW_NAMES.join(", ")}` });
export type ViewName = z.infer<typeof ViewName>;

export const ViewParams = z.object({ view: ViewName });
export const ViewQuery = z.strictObject(pageQueryShape);

export const ViewPage = z
  .object({
    view: ViewName,
    today: z.string().describe("the user's today (YYYY-MM-DD in their time zone) the view was drawn for"),
    groups: z
      .array(
        z.object({
          day: z.string().nullable().describe("the local day (YYYY-MM-DD) the tasks fall on; null for No date, and for a completed task without completed_at"),
          tasks: z.array(Task),
        }),
      )
      .describe("consecutive tasks of one day; a day can continue on the next page"),
    next_cursor: z.string().nullable(),
  })
  .meta({ id: "ViewPage" });
export type ViewPage = z.infer<typeof ViewPage>;

const Count = z.number().int().min(0).describe("up to `cap`; `cap` means that many or more");
export const ViewCounts = z
  .object({
    today: z.string().describe("the user's today"),
    cap: z.number().int(),
    counts: z.object({
      overdue: Count,
      today: Count,
      tomorrow: Count,
      next_7_days: Count,
      upcoming: Count,
      no_date: Count,
      completed: Count,
    }),
  })
  .meta({ id: "ViewCounts" });
export type ViewCounts = z.infer<typeof ViewCounts>;
