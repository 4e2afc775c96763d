import { z } from "zod";
import { ID_MAX, UrlId } from "../../core/ids";

export const FEED_INCLUDES = ["tasks", "countdowns", "habits"] as const;
export const FeedInclude = z.enum(FEED_INCLUDES);
export type FeedInclude = z.infer<typeof FeedInclude>;

/** How dated tasks appear: calendar events (all-day or timed) or to-dos (VTODO with DUE). */
export const TaskFormat = z.enum(["events", "todos"]);

export const FeedCreate = z.strictObject({
  scope: z.enum(["all", "list"]).describe("`all`: everything the user sees (own lists and lists shared with them); `list`: one list"),
  list_id: z.string().max(ID_MAX).nullish().describe("required with `scope: list` (a list the user can see: own, or shared with them); absent or null with `scope: all`"),
  include: z.array(FeedInclude).min(1).max(10).describe("what the feed shows; a non-empty subset (duplicates are ignored)"),
  task_format: TaskFormat.default("events").describe(
    "how dated tasks appear: `events` (default; a date-only due date is an all-day event, a due instant a timed event) or `todos` (VTODO with DUE, for apps that show tasks: Thunderbird, Evolution). Not in the devices spec: an extension documented here",
  ),
});
export type FeedCreate = z.infer<typeof FeedCreate>;

export const Feed = z
  .object({
    id: z.string(),
    scope: z.enum(["all", "list"]),
    list_id: z.string().nullable(),
    include: z.array(FeedInclude),
    task_format: TaskFormat,
    url: z.string().describe("https://…/feeds/<secret>.ics, absolute, from the request's origin; the secret is the credential: whoever has the URL reads the feed"),
    webcal_url: z.string().describe("the same URL as webcal://… (opens the subscribe dialog of a calendar app)"),
    created_at: z.string(),
  })
  .meta({ id: "Feed" });
export type Feed = z.infer<typeof Feed>;

export const FeedList = z.object({ items: z.array(Feed).describe("newest first") }).meta({ id: "FeedList" });

export const FeedParams = z.object({ feed_id: UrlId });
/** A file name longer than FEED_FILE_MAX names no feed: 404 like any unknown one (documented, not checked by zod: a 422 would tell a prober more). */
export const FEED_FILE_MAX = 200;
export const FeedFileParams = z.object({ file: z.string().meta({ description: "<secret>.ics", maxLength: FEED_FILE_MAX }) });
