/**
 * argon2id through Bun.password. Each hash takes `memoryKiB` (64 MiB by default) and ~100-300 ms
 * of one core, so at most two run at once; others wait in line.
 */
export class PasswordHasher {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private dummy: Promise<string> | null = null;

  constructor(
    private readonly memoryCost: number,
    private readonly timeCost: number,
    private readonly maxConcurrent = 2,
  ) {}

  private async slot<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.maxConcurrent) await new Promise<void>((r) => this.waiting.push(r));
    this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  hash(password: string): Promise<string> {
    return this.slot(() => Bun.password.hash(password, { algorithm: "argon2id", memoryCost: this.memoryCost, timeCost: this.timeCost }));
  }

  verify(password: string, hash: string): Promise<boolean> {
    return this.slot(async () => {
      try {
        return await Bun.password.verify(password, hash);
      } catch {
        return false;
      }
    });
  }

  /**
   * Verifies against a hash made with the same parameters for a user that does not exist, so an
   * unknown username costs the same time as a wrong password. Made on first use, not at start-up
   * (it would cost start-up time and 64 MiB of resident memory).
   */
  async verifyDummy(password: string): Promise<false> {
    this.dummy ??= this.hash(crypto.randomUUID());
    await this.verify(password, await this.dummy);
    return false;
  }
}
