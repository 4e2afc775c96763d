import { z } from "zod";

// The import endpoints' shapes (the spec: /work/shared/spec/import.md), schema and type side by side.

export const IMPORT_FORMATS = ["ticktick", "todoist", "ics"] as const;
export const ImportFormat = z.enum(IMPORT_FORMATS).describe("ticktick: TickTick backup CSV; todoist: a Todoist project CSV or backup ZIP; ics: iCalendar VTODOs");
export type ImportFormat = z.infer<typeof ImportFormat>;

export const PreviewQuery = z.strictObject({ format: ImportFormat });

export const ImportCounts = z
  .object({
    folders: z.number().int(),
    lists: z.number().int(),
    tasks: z.number().int().describe("top-level tasks"),
    subtasks: z.number().int().describe("subtasks (TickTick checklist items included)"),
    tags: z.number().int().describe("distinct tags the imported tasks carry (created where you have no tag of that name)"),
    recurrences: z.number().int(),
    memos: z.number().int(),
    reminders: z.number().int().describe("reminders created on the imported tasks (each one that cannot be kept is listed in `skipped`, each kept differently in `changed`)"),
  })
  .meta({ id: "ImportCounts" });
export type ImportCounts = z.infer<typeof ImportCounts>;

export const zeroCounts = (): ImportCounts => ({ folders: 0, lists: 0, tasks: 0, subtasks: 0, tags: 0, recurrences: 0, memos: 0, reminders: 0 });

const line = z.number().int().optional().describe("the physical line (1-based) where the row or component starts; absent for notes about the whole file");
export const SkippedNote = z.object({ line, item: z.string().describe("what the note is about: a title, a column, a property"), reason: z.string() }).meta({ id: "ImportSkipped" });
export const ChangedNote = z.object({ line, item: z.string().describe("what the note is about: a title, a column, a property"), what: z.string() }).meta({ id: "ImportChanged" });
export type Skipped = z.infer<typeof SkippedNote>;
export type Changed = z.infer<typeof ChangedNote>;

export const PreviewResult = z
  .object({
    import_token: z.string().describe("single use, bound to you, this file's SHA-256 and the format"),
    expires_at: z.string().describe("15 minutes after the preview"),
    format: ImportFormat,
    counts: ImportCounts.describe("what the import will create"),
    skipped: z.array(SkippedNote).describe("every row or part that will not be imported, and why (at most 500; a last entry counts the rest)"),
    changed: z.array(ChangedNote).describe("every row imported differently from the source, and how (at most 500; a last entry counts the rest)"),
  })
  .meta({ id: "ImportPreview" });
export type PreviewResult = z.infer<typeof PreviewResult>;

export const ImportBody = z.strictObject({ import_token: z.string().min(1).max(200) });
export type ImportBody = z.infer<typeof ImportBody>;

export const ImportResult = z
  .object({
    format: ImportFormat,
    counts: ImportCounts.describe("what was created (for a file imported before: what its first import created)"),
    already_imported: z.boolean().optional().describe("true when this file had been imported already: nothing was created"),
  })
  .meta({ id: "ImportResult" });
export type ImportResult = z.infer<typeof ImportResult>;
