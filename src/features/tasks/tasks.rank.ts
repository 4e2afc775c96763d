// Manual order (issue 14): each task carries a rank, a fractional-indexing key (the
// `fractional-indexing` package: base-62 digits after a length head, "a0" < "a1" < "a1V" < "a2"
// < … < "b00"), compared as bytes, ties broken by id. A move writes one new key between its two
// neighbours, so no sibling is renumbered; appending grows the integer part (logarithmic length).
// Only repeated insertion at one spot lengthens keys (about one character per six insertions):
// when a key would pass RANK_MAX the few neighbours around the spot get fresh, evenly spread keys
// together with it (placeAt), never the whole list unless the list is that small.
import { generateKeyBetween, generateNKeysBetween } from "fractional-indexing";

/** The longest rank stored (a key this long is refused on restore). */
export const RANK_MAX = 64;

const RANK_RE = /^[0-9A-Za-z]+$/;

/** A valid key of the library's default alphabet, at most RANK_MAX characters. */
export function isRank(s: string): boolean {
  if (s.length < 2 || s.length > RANK_MAX || !RANK_RE.test(s)) return false;
  try {
    // The library validates its lower bound (head, length, no trailing zero); there is no largest
    // key below which nothing fits except the one that has no successor, which we never produce.
    generateKeyBetween(s, null);
    return true;
  } catch {
    return false;
  }
}

/** A key after `last` (null: the first key of an empty scope). */
export function rankAfter(last: string | null): string {
  return generateKeyBetween(last, null);
}

/** `n` increasing keys after `last`. */
export function ranksAfter(last: string | null, n: number): string[] {
  return generateNKeysBetween(last, null, n);
}

export interface Ranked {
  id: string;
  rank: string;
}

/**
 * Where a task goes among its siblings: `window` is a run of consecutive siblings in order
 * (rank, id) without the task placed, `at` the index in the window before which it goes (0 …
 * window.length). `before`/`after` say whether more siblings lie beyond each end of the window
 * (their ranks are `lower` and `upper`: the nearest outside key, null when none). Returns the new
 * rank and the neighbours whose ranks change (empty unless two neighbours tie or the key would
 * pass RANK_MAX), or null when the window is too small to make room (ask again with a larger one).
 */
export function placeAt(
  window: Ranked[],
  at: number,
  lower: string | null,
  upper: string | null,
): { rank: string; rekeyed: Ranked[] } | null {
  const lo = at > 0 ? window[at - 1]!.rank : lower;
  const hi = at < window.length ? window[at]!.rank : upper;
  const direct = between(lo, hi);
  if (direct !== null && direct.length <= RANK_MAX) return { rank: direct, rekeyed: [] };
  // Spread fresh keys over a growing run of neighbours around the spot, bounded by the keys just
  // outside it (the library makes short keys when the gap is wide).
  for (let w = 1; ; w *= 2) {
    const from = Math.max(0, at - w);
    const to = Math.min(window.length, at + w);
    const outLo = from > 0 ? window[from - 1]!.rank : lower;
    const outHi = to < window.length ? window[to]!.rank : upper;
    const n = to - from + 1;
    let keys: string[] | null = null;
    if (outLo === null || outHi === null || outLo < outHi) {
      try {
        keys = generateNKeysBetween(outLo, outHi, n);
      } catch {
        keys = null;
      }
    }
    if (keys && keys.every((k) => k.length <= RANK_MAX)) {
      const rekeyed: Ranked[] = [];
      let rank = "";
      for (let i = 0, j = from; i < n; i++) {
        if (i === at - from) rank = keys[i]!;
        else {
          const s = window[j++]!;
          if (s.rank !== keys[i]) rekeyed.push({ id: s.id, rank: keys[i]! });
        }
      }
      return { rank, rekeyed };
    }
    if (from === 0 && to === window.length) return null;
  }
}

/** A key strictly between two keys (null: open end), or null when there is none (a tie). */
function between(lo: string | null, hi: string | null): string | null {
  if (lo !== null && hi !== null && lo >= hi) return null;
  try {
    return generateKeyBetween(lo, hi);
  } catch {
    return null;
  }
}
