import { existsSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { createHmac, timingSafeEqual, randomBytes } from "node:crypto";

/**
 * The server secret signs CSRF tokens and cursors. It lives in the data directory (0600), so a
 * backup of the directory keeps sessions valid and nothing is written elsewhere.
 */
export class ServerSecret {
  private constructor(private readonly key: Buffer) {}

  static loadOrCreate(dataDir: string): ServerSecret {
    const file = join(dataDir, "secret.key");
    if (existsSync(file)) {
      const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
      if (key.length < 32) throw new Error(`${file} is too short; delete it to make a new one (sessions will end)`);
      return new ServerSecret(key);
    }
    const key = randomBytes(32);
    writeFileSync(file, key.toString("base64") + "\n", { mode: 0o600, flag: "wx" });
    chmodSync(file, 0o600);
    return new ServerSecret(key);
  }

  static fromBytes(key: Buffer): ServerSecret {
    return new ServerSecret(key);
  }

  /** HMAC-SHA256 of `purpose` and `message`, base64url. The purpose keeps uses apart. */
  sign(purpose: string, message: string): string {
    return createHmac("sha256", this.key).update(purpose).update("\0").update(message).digest("base64url");
  }

  verify(purpose: string, message: string, signature: string): boolean {
    return constantTimeEqual(this.sign(purpose, message), signature);
  }
}

/** Compares two strings in time independent of where they differ; a length mismatch is just false. */
export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    // Still spend a comparison so the length is not the only timing signal.
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

export function sha256Hex(s: string | Uint8Array): string {
  // The one-shot form: a third of the cost of a CryptoHasher object (it runs on every request).
  return Bun.SHA256.hash(s, "hex");
}
