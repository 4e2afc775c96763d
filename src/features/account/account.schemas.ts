import { z } from "zod";
import { maxChars } from "../../core/text";
import { canonicalTimeZone, isLocalTime, isTimeZone } from "../../core/time";

// No control characters in names shown to people.
const noControl = (s: string) => !/[\u0000-\u001f\u007f]/.test(s);

export const Username = maxChars(z.string().trim().min(1, "username is required"), 64, "at most 64 characters")
  .refine(noControl, "no control characters")
  .refine((s) => !/\s/.test(s), "no spaces")
  // Invisible characters (zero-width space, direction marks…) would let "owner\u200b" pose as "owner".
  .refine((s) => !/[\p{C}\p{Z}]/u.test(s), "no invisible or unassigned characters");
export const Password = maxChars(z.string().min(8, "at least 8 characters"), 1024, "at most 1024 characters")
  .describe(
    "8 to 1024 characters, and not too easy to guess: a password that zxcvbn (@zxcvbn-ts with its common dictionaries: leaked passwords, keyboard patterns, repeats, sequences, dates, and the account's username and display name) rates below score 2 (under a million guesses), such as `12345678`, `password` or `P@ssw0rd`, is refused with `422 validation_failed` on this field, its message saying why. Only the first 64 characters are rated.",
  );
export const DisplayName = maxChars(z.string().trim().min(1), 100).refine(noControl, "no control characters");
// isTimeZone refuses names over 64 characters (the longest IANA name has 32); maxLength documents it.
export const TimeZone = z.string().refine(isTimeZone, "not a known IANA time zone").meta({ maxLength: 64 }).transform(canonicalTimeZone);

export const NewUser = z.strictObject({
    username: Username,
    password: Password,
    display_name: DisplayName.optional(),
    timezone: TimeZone.optional(),
  });
export type NewUser = z.infer<typeof NewUser>;

export const LoginBody = z.strictObject({ username: maxChars(z.string(), 256), password: maxChars(z.string(), 1024) });
export type LoginBody = z.infer<typeof LoginBody>;

export const ChangePasswordBody = z.strictObject({ current_password: maxChars(z.string(), 1024), new_password: Password });
export type ChangePasswordBody = z.infer<typeof ChangePasswordBody>;

/** A wall-clock time, HH:MM (24 hours). */
export const LocalTime = z.string().refine(isLocalTime, "a time written HH:MM (00:00 to 23:59)").meta({ maxLength: 5, pattern: "^([01]\\d|2[0-3]):[0-5]\\d$" });
export const QuietHours = z
  .strictObject({ start: LocalTime, end: LocalTime })
  .refine((q) => q.start !== q.end, { message: "start and end must differ", path: ["end"] })
  .describe("local times; a delivery due from `start` until `end` waits until `end` (an end before the start spans midnight)");

export const MePatch = z.strictObject({
  display_name: DisplayName.optional(),
  timezone: TimeZone.optional(),
  reminder_time: LocalTime.optional().describe("the local time a date-only task's reminders count from (default 09:00)"),
  quiet_hours: QuietHours.nullable().optional().describe("null: no quiet hours"),
});
export type MePatch = z.infer<typeof MePatch>;

export const User = z.object({
    id: z.string(),
    username: z.string(),
    display_name: z.string(),
    timezone: z.string(),
    is_admin: z.boolean(),
    created_at: z.string(),
  })
  .meta({ id: "User" });
export type User = z.infer<typeof User>;

/** GET /me: the user plus the storage its attachments take. */
export const Me = User.extend({
  reminder_time: z.string().describe("HH:MM: the local time a date-only task's reminders count from"),
  quiet_hours: z.object({ start: z.string(), end: z.string() }).nullable().describe("HH:MM local times during which reminder deliveries wait; null when none"),
  attachment_bytes: z.number().int().describe("bytes of the user's attachments"),
  attachment_quota_bytes: z
    .number()
    .int()
    .nullable()
    .describe("bytes the user's attachments may take in all (APP_ATTACHMENT_QUOTA_BYTES); null: no quota"),
}).meta({ id: "Me" });
export type Me = z.infer<typeof Me>;

export const UserEnvelope = z.object({ user: User });
export const SetupStatus = z.object({ initialized: z.boolean() });
export const UserList = z.object({ items: z.array(User) });
