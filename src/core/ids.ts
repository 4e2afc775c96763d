/** New identifiers: UUIDv7 (time-ordered, lowercase, hyphenated). Clients treat them as opaque. */
export function newId(): string {
  return Bun.randomUUIDv7();
}

/** 256-bit random token, base64url, for sessions and preflight tokens. */
export function newToken(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return Buffer.from(bytes).toString("base64url");
}
