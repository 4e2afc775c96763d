// The API's shapes, taken from the server's own zod schemas (type-only imports: nothing of the server
// is bundled), so the client cannot drift from what the server validates and answers.
import type { z } from "zod";
import type { User } from "../../../src/features/account/account.schemas";
import type { Session } from "../../../src/features/sessions/sessions.schemas";
import type { Folder } from "../../../src/features/folders/folders.schemas";
import type { List } from "../../../src/features/lists/lists.schemas";
import type { Tag } from "../../../src/features/tags/tags.schemas";
import type { Task } from "../../../src/features/tasks/tasks.schemas";
import type { Recurrence, CompleteResult } from "../../../src/features/recurrence/recurrence.schemas";
import type { Habit, HabitCreate, HabitWeek, HabitStatsSchema, HabitLog, HabitPause } from "../../../src/features/habits/habits.schemas";
import type { Countdown, CountdownCreate } from "../../../src/features/countdowns/countdowns.schemas";
import type { Memo } from "../../../src/features/memos/memos.schemas";
import type { Attachment } from "../../../src/features/attachments/attachments.schemas";
import type { PreflightResult, RestoreResult as BackupRestoreResult } from "../../../src/transfer/backup/backup.schemas";
import type { RestoreResult as LegacyRestoreResult } from "../../../src/transfer/legacy/legacy.schemas";
import type { BackupsOverview as BackupsOverviewSchema } from "../../../src/transfer/snapshot/snapshot.schemas";
import type { InboxInvitation, ListInvitation, Member, Person } from "../../../src/features/sharing/sharing.schemas";

export type { User, Folder, List, Tag, Task, Recurrence, Habit, HabitWeek, HabitLog, HabitPause, Countdown, Memo, Attachment, BackupRestoreResult, LegacyRestoreResult };
export type { InboxInvitation, ListInvitation, Member, Person };
export type Preflight = PreflightResult;
export type BackupsOverview = BackupsOverviewSchema;
export type SessionInfo = z.output<typeof Session>;
export type RecurrenceCompletion = CompleteResult;
export type NewHabit = z.input<typeof HabitCreate>;
export type HabitStats = z.output<typeof HabitStatsSchema>;
export type NewCountdown = z.input<typeof CountdownCreate>;
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

