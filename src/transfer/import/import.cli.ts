import { readFileSync, statSync } from "node:fs";
import { basename } from "node:path";
import type { Core } from "../../core/core";
import { AppError, notFound, payloadTooLarge } from "../../core/errors";
import { findUserByKey, usernameKey } from "../../features/account/account.repo";
import { preview, reminderTimeOf, runImport } from "./import.jobs";
import { readPlan } from "./import.read";
import { IMPORT_FORMATS, type ImportCounts, type ImportFormat, type PreviewResult } from "./import.schemas";
import { IMPORT_FILE_LIMIT } from "./import.service";

// `app import ticktick|todoist|ics FILE --user NAME [--dry-run]`: the operator's way in, through
// the very preview and import the API runs (import.jobs.ts), in this process.

const NAMES: Record<ImportFormat, string> = { ticktick: "TickTick backup CSV", todoist: "Todoist CSV or backup ZIP", ics: "iCalendar file" };

function countsLine(c: ImportCounts): string {
  return `${c.folders} folder(s), ${c.lists} list(s), ${c.tasks} task(s), ${c.subtasks} subtask(s), ${c.tags} tag(s), ${c.recurrences} recurrence(s), ${c.memos} memo(s), ${c.reminders} reminder(s)`;
}

/** The preview as the API answers it, as text: counts, then every skipped and changed row with its line. */
export function previewText(p: Pick<PreviewResult, "format" | "counts" | "skipped" | "changed">, file: string, dryRun: boolean): string {
  const out = [`${NAMES[p.format]} ${file}${dryRun ? " (dry run: nothing is written)" : ""}`, `will create: ${countsLine(p.counts)}`];
  const at = (n: { line?: number }) => (n.line === undefined ? "" : `line ${n.line}: `);
  out.push(`skipped (${p.skipped.length}):`, ...p.skipped.map((n) => `  ${at(n)}${n.item}: ${n.reason}`));
  out.push(`changed (${p.changed.length}):`, ...p.changed.map((n) => `  ${at(n)}${n.item}: ${n.what}`));
  return out.join("\n");
}

export async function importCommand(core: Core, o: { format: string; file: string; username: string; dryRun: boolean }): Promise<string> {
  if (!(IMPORT_FORMATS as readonly string[]).includes(o.format)) throw new AppError("validation_failed", `unknown format ${o.format.slice(0, 40)}: ticktick, todoist or ics`);
  const format = o.format as ImportFormat;
  const user = findUserByKey(core.db, usernameKey(o.username.trim()));
  if (!user) throw notFound(`user ${o.username.slice(0, 40)}`);
  let size: number;
  try {
    size = statSync(o.file).size;
  } catch (e) {
    throw new AppError("malformed_request", `cannot read ${o.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (size > IMPORT_FILE_LIMIT) throw payloadTooLarge(IMPORT_FILE_LIMIT);
  const bytes = new Uint8Array(readFileSync(o.file));
  const fileName = basename(o.file);
  if (o.dryRun) {
    const plan = await readPlan(format, bytes, fileName, user.timezone, core.clock.now(), reminderTimeOf(core, user.id));
    return previewText({ format, ...plan }, o.file, true);
  }
  const meta = { ip: null, userAgent: "app import", secure: false };
  const p = await preview(core, { userId: user.id, timezone: user.timezone, format, fileName, bytes, meta });
  const r = await runImport(core, { userId: user.id, timezone: user.timezone, token: p.import_token, meta });
  const done = r.already_imported ? `already imported (this file, ${format}): nothing created; its first import created ${countsLine(r.counts)}` : `imported into ${user.username}: ${countsLine(r.counts)}`;
  return `${previewText(p, o.file, false)}\n${done}`;
}
