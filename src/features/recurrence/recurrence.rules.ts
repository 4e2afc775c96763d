import { checkedSeries, isDateOnly, parseRRule, type Series } from "./recurrence.engine";

/**
 * The check of a kind-rrule schedule about to be stored, made by the API (create, update) and by
 * a restore (backup, legacy) alike: the rule parses for its first occurrence's form (a date or an
 * instant), and the series it makes can produce something. On success the rule's canonical text
 * (what is stored) and the series.
 */
export function checkSchedule(rrule: string, dtstart: string, timezone: string): { ok: true; text: string; series: Series } | { ok: false; message: string } {
  const parsed = parseRRule(rrule, isDateOnly(dtstart));
  if (!parsed.ok) return parsed;
  const checked = checkedSeries(parsed.rule, dtstart, timezone);
  if (!checked.ok) return checked;
  return { ok: true, text: parsed.rule.text, series: checked.series };
}

// What a restore (src/transfer/) reads of the engine: the rule parser and its limits, as the API uses them.
export { checkedSeries, MAX_INTERVAL, MAX_RRULE_LENGTH, parseRRule, type Unit } from "./recurrence.engine";
