/**
 * Memory pacing: the one place the server asks the collector to run (`Bun.gc`).
 *
 * Streaming work (uploads, archives, 100,000-record restores) makes garbage several times the
 * size of the data it moves: chunks, decoded text, parsed records, bound statements. JavaScriptCore
 * weighs that garbage late, so left alone the heap grows by hundreds of MiB between two of its own
 * collections (bench/README.md: backup 239 → 137 MiB, legacy restore 501 → 220 MiB). A minor
 * collection (young objects only) is cheap and does not block for long; a full one is 10-150 ms at
 * these heap sizes, so it is asked for only where long-lived garbage (records kept and let go)
 * must go, and never on the serving thread in a loop.
 */

/** Collects now: `full` for everything, else the young generation only. */
export function collectGarbage(full: boolean): void {
  Bun.gc(full);
}

/**
 * Counts work (bytes, records) and collects every `every` units: a minor collection, or a full
 * one every `fullEvery`-th time (1: always full; 0: never).
 */
export class MemoryPacer {
  private since = 0;
  private collections = 0;

  constructor(
    private readonly every: number,
    private readonly fullEvery = 0,
  ) {}

  /** `amount` more units of work done. */
  add(amount = 1): void {
    this.since += amount;
    if (this.since < this.every) return;
    this.since = 0;
    this.collections++;
    collectGarbage(this.fullEvery > 0 && this.collections % this.fullEvery === 0);
  }
}
