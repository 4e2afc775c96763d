import type { FieldProblem } from "./errors";

/**
 * Size caps of problem+json answers, in a module of their own (no Elysia) so that code running in
 * a worker can collect problems within them too.
 *
 * Every problem body is small whatever produced it: a 4.9 MB backup once answered a 743 MiB 422
 * (200 records, each naming an unknown key of 3.9 M characters; issue 11). toProblem() applies
 * these to every answer; producers that can meet thousands of problems (backup, legacy) should
 * also stop collecting at PROBLEM_LIST_MAX (ProblemList below) so they never hold them.
 */

/** Characters kept of `detail`, of each problem's `message` and of each `path`; longer ones end in "…". */
export const PROBLEM_MESSAGE_MAX = 200;
/** Problems listed in `errors`; past it, one last entry says how many more were found. */
export const PROBLEM_LIST_MAX = 100;
/** Bytes (UTF-8 JSON) the listed problems may take in all (the list stops earlier when they are long). */
export const PROBLEM_LIST_BYTES_MAX = 32 * 1024;
/** Characters of a user's value a message may quote (see quoteValue). */
export const PROBLEM_QUOTE_MAX = 40;

/** `s` cut to `max` characters (ending in "…"), never between the two halves of a surrogate pair. */
export function capText(s: string, max = PROBLEM_MESSAGE_MAX): string {
  if (typeof s !== "string") s = String(s);
  if (s.length <= max) return s;
  let cut = max - 1;
  const c = s.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--;
  return `${s.slice(0, cut)}…`;
}

/** A user's value as a message may quote it: JSON-quoted, at most PROBLEM_QUOTE_MAX characters of it. */
export function quoteValue(v: string): string {
  return v.length <= PROBLEM_QUOTE_MAX ? JSON.stringify(v) : `${JSON.stringify(capText(v, PROBLEM_QUOTE_MAX).slice(0, -1))}…`;
}

const OMITTED = /^(\d+) more problems? not listed$/;

/** The last entry of a list that was cut: `{ path: "", message: "N more problems not listed" }`. */
export function omittedNote(n: number): FieldProblem {
  return { path: "", message: `${n} more problem${n === 1 ? "" : "s"} not listed` };
}

/**
 * A problem list that keeps the first PROBLEM_LIST_MAX problems and counts the rest, for producers
 * that check many records: `full` says when further checking can only add to the count.
 */
export class ProblemList {
  readonly items: FieldProblem[] = [];
  private omitted = 0;
  add(path: string, message: string): void {
    if (this.items.length < PROBLEM_LIST_MAX) this.items.push({ path: capText(path), message: capText(message) });
    else this.omitted++;
  }
  get full(): boolean {
    return this.items.length >= PROBLEM_LIST_MAX;
  }
  get size(): number {
    return this.items.length + this.omitted;
  }
  toErrors(): FieldProblem[] {
    return this.omitted ? [...this.items, omittedNote(this.omitted)] : this.items;
  }
}

/**
 * At most PROBLEM_LIST_MAX problems and PROBLEM_LIST_BYTES_MAX bytes of JSON, each path and
 * message capped; what is cut is counted in a last entry (added to one a producer already wrote).
 */
export function capErrors(list: readonly FieldProblem[]): FieldProblem[] {
  let n = list.length;
  let omitted = 0;
  const last = list[n - 1];
  const note = last && last.path === "" && typeof last.message === "string" ? OMITTED.exec(last.message) : null;
  if (note) {
    omitted = Number(note[1]);
    n--;
  }
  const out: FieldProblem[] = [];
  let bytes = 0;
  for (let i = 0; i < n && out.length < PROBLEM_LIST_MAX; i++) {
    const p = list[i]!;
    const e = { path: capText(p?.path ?? ""), message: capText(p?.message ?? "") };
    const size = Buffer.byteLength(JSON.stringify(e)) + 1;
    if (bytes + size > PROBLEM_LIST_BYTES_MAX) break;
    bytes += size;
    out.push(e);
  }
  omitted += n - out.length;
  if (omitted > 0) out.push(omittedNote(omitted));
  return out;
}

