import { z } from "zod";

// The legacy routes' own shapes (query, answers), needed at start-up. The file's record schemas are
// in legacy.records.ts, loaded with the service on first use.

/** The kinds of a legacy file, in file (and restore) order. */
export const KINDS = ["folders", "lists", "tasks", "recurrences", "habits", "countdowns", "memos"] as const;
export type Kind = (typeof KINDS)[number];

export const RestoreQuery = z.strictObject({
    mode: z
      .enum(["merge", "replace"], { error: "mode must be merge or replace" })
      .default("merge")
      .describe("merge (default): add what this user does not have yet; replace: the file becomes the account's content"),
  });
export type RestoreMode = "merge" | "replace";

const Counts = z.object({
  folders: z.number().int(),
  lists: z.number().int(),
  tasks: z.number().int(),
  recurrences: z.number().int(),
  habits: z.number().int(),
  countdowns: z.number().int(),
  memos: z.number().int(),
});
export type Counts = z.infer<typeof Counts>;

export const RestoreResult = z.object({
    mode: z.enum(["merge", "replace"]),
    counts: Counts.describe("records written, per kind"),
    skipped: Counts.describe("merge: records skipped because this user already has their id"),
  })
  .meta({ id: "LegacyRestoreResult" });
export type RestoreResult = z.infer<typeof RestoreResult>;

export const LegacyCsv = z.string().describe("legacy CSV v1: UTF-8 with a BOM, one header row, a `kind` column");
