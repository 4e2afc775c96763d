/** Who an argon2 computation is for: the queue bounds what one address or one username may hold. */
export interface HashLane {
  ip?: string | null;
  user?: string | null;
  /**
   * Served first, and may take the place of a waiting computation that is not (which is then
   * refused): a caller in good standing (an address without failed attempts, an administrator).
   */
  priority?: boolean;
}

/** How much waiting the hash queue allows. */
export interface HashQueueLimits {
  /** argon2 computations running at once (each takes `memoryKiB` and one core). */
  slots: number;
  /** Computations waiting for a slot, over all callers. */
  waiting: number;
  /** Computations running or waiting for one client address. */
  perAddress: number;
  /** Computations running or waiting for one username. */
  perUser: number;
}

/**
 * Two slots (the machine we target has two cores); eight waiting is at most about four hash times
 * of waiting for whoever is last in line (~0.5 s at the default cost), instead of the unbounded
 * line a flood of wrong logins built (14.5 s for a real login behind 60 of them). Three per address
 * leaves room for a household behind one router signing in at the same moment.
 */
export const DEFAULT_QUEUE_LIMITS: HashQueueLimits = { slots: 2, waiting: 8, perAddress: 3, perUser: 3 };

/** The queue has no room for this computation: the caller answers 429 at once. */
export class HashQueueFull extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super("the password queue is full");
    this.name = "HashQueueFull";
  }
}

interface Waiter {
  go: () => void;
  refuse: (e: HashQueueFull) => void;
}

/**
 * argon2id through Bun.password. Each hash takes `memoryKiB` (64 MiB by default) and ~100-300 ms
 * of one core, so at most `slots` run at once; a few more may wait, and beyond that a computation
 * is refused at once (HashQueueFull) instead of making everyone behind it wait. Callers in good
 * standing (`priority`) wait ahead of the others and, when the line is full, take the place of the
 * last one of them: a flood from addresses that keep failing cannot keep a household out.
 */
export class PasswordHasher {
  private running = 0;
  private readonly urgent: Waiter[] = [];
  private readonly waiters: Waiter[] = [];
  private readonly byAddress = new Map<string, number>();
  private readonly byUser = new Map<string, number>();
  // Moving average of one computation, for Retry-After.
  private averageMs = 250;
  private readonly dummy: string;
  /** argon2 computations started (tests: an unknown user costs exactly one, like a wrong password). */
  computations = 0;

  constructor(
    private readonly memoryCost: number,
    private readonly timeCost: number,
    private readonly limits: HashQueueLimits = DEFAULT_QUEUE_LIMITS,
  ) {
    this.dummy = dummyHash(memoryCost, timeCost);
  }

  /** Computations running and waiting (for the benchmark and tests). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.urgent.length + this.waiters.length };
  }

  private retryAfter(): number {
    const ahead = this.running + this.urgent.length + this.waiters.length;
    return Math.min(30, Math.max(1, Math.ceil((ahead / this.limits.slots) * (this.averageMs / 1000))));
  }

  /**
   * Admits a computation (and says whether it must wait) or throws HashQueueFull, synchronously,
   * so the caller's bookkeeping and the admission happen in the same turn of the event loop.
   */
  private admit(lane: HashLane | undefined): { leave: () => void; turn: Promise<void> | null } {
    const ip = lane?.ip ?? null;
    const user = lane?.user ?? null;
    const priority = lane?.priority === true;
    if ((ip !== null && (this.byAddress.get(ip) ?? 0) >= this.limits.perAddress) || (user !== null && (this.byUser.get(user) ?? 0) >= this.limits.perUser)) {
      throw new HashQueueFull(this.retryAfter());
    }
    let turn: Promise<void> | null = null;
    if (this.running < this.limits.slots) {
      this.running++;
    } else {
      const lineFull = this.urgent.length + this.waiters.length >= this.limits.waiting;
      if (lineFull && !(priority && this.waiters.length > 0)) throw new HashQueueFull(this.retryAfter());
      // The newest ordinary waiter gives its place up (it is answered 429 now, not after a wait).
      if (lineFull) this.waiters.pop()!.refuse(new HashQueueFull(this.retryAfter()));
      turn = new Promise<void>((go, refuse) => (priority ? this.urgent : this.waiters).push({ go, refuse }));
    }
    if (ip !== null) this.byAddress.set(ip, (this.byAddress.get(ip) ?? 0) + 1);
    if (user !== null) this.byUser.set(user, (this.byUser.get(user) ?? 0) + 1);
    const leave = () => {
      if (ip !== null) decrement(this.byAddress, ip);
      if (user !== null) decrement(this.byUser, user);
    };
    return { leave, turn };
  }

  private slot<T>(lane: HashLane | undefined, fn: () => Promise<T>): Promise<T> {
    // A slot is taken now or handed over by the computation that frees it (never taken back in
    // between by a newcomer), so at most `slots` run and the waiting count is exact.
    const { leave, turn } = this.admit(lane);
    const run = async (): Promise<T> => {
      if (turn) {
        try {
          await turn;
        } catch (e) {
          leave();
          throw e;
        }
      }
      this.computations++;
      const started = performance.now();
      try {
        return await fn();
      } finally {
        this.averageMs = this.averageMs * 0.8 + (performance.now() - started) * 0.2;
        leave();
        const next = this.urgent.shift() ?? this.waiters.shift();
        if (next) next.go();
        else this.running--;
      }
    };
    return run();
  }

  /** Throws HashQueueFull (synchronously) when there is no room. */
  hash(password: string, lane?: HashLane): Promise<string> {
    return this.slot(lane, () => Bun.password.hash(password, { algorithm: "argon2id", memoryCost: this.memoryCost, timeCost: this.timeCost }));
  }

  /** Throws HashQueueFull (synchronously) when there is no room. */
  verify(password: string, hash: string, lane?: HashLane): Promise<boolean> {
    return this.slot(lane, async () => {
      try {
        return await Bun.password.verify(password, hash);
      } catch {
        return false;
      }
    });
  }

  /**
   * Verifies against a hash with the same parameters for a user that does not exist, so an
   * unknown username costs the same time as a wrong password.
   */
  async verifyDummy(password: string, lane?: HashLane): Promise<false> {
    await this.verify(password, this.dummy, lane);
    return false;
  }
}

function decrement(m: Map<string, number>, k: string): void {
  const n = (m.get(k) ?? 1) - 1;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
}

/**
 * A well-formed argon2id hash (the PHC string Bun.password.hash writes: v=19, p=1, 32-byte salt and
 * output) of random bytes with the configured cost, built without computing anything: verifying a
 * password against it costs exactly what verifying against a real hash does, and it is ready at
 * start-up without the 64 MiB and the ~100-300 ms a real hash would take there (the first unknown
 * login used to pay for making it: 236 ms instead of ~120 ms). No password matches it (a match
 * would need the random output to equal argon2's).
 */
export function dummyHash(memoryCost: number, timeCost: number): string {
  const b64 = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n))).toString("base64").replace(/=+$/, "");
  return `$argon2id$v=19$m=${memoryCost},t=${timeCost},p=1$${b64(32)}$${b64(32)}`;
}
