import { S3Client } from "bun";
import { instantOfName } from "./snapshot.manifest";
import { toPrune, type Policy } from "./snapshot.retention";

/**
 * The off-site copy: Bun's built-in S3 client (any S3-compatible store: Backblaze B2, Wasabi,
 * MinIO, Garage). The verified local archive is streamed up in parts (never held in memory),
 * each part retried by the client and the whole upload tried again after a pause; then read back
 * and its SHA-256 compared, and only then are older copies pruned by the same retention. An
 * upload that did not complete leaves no object (S3 makes a multipart upload visible only once
 * completed); one that fails its check is deleted.
 */

export interface S3Target {
  endpoint: string;
  region: string;
  bucket: string;
  prefix: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface S3Outcome {
  key: string;
  pruned: string[];
}

/** Part size of the streamed upload (S3's minimum is 5 MiB). */
const PART_BYTES = 8 * 1024 * 1024;
const ATTEMPTS = 3;
export const RETRY_PAUSE_MS = { first: 1000, factor: 4 };

function clientOf(t: S3Target): S3Client {
  return new S3Client({
    endpoint: t.endpoint || undefined,
    region: t.region || undefined,
    bucket: t.bucket,
    accessKeyId: t.accessKeyId || undefined,
    secretAccessKey: t.secretAccessKey || undefined,
  });
}

/** An error's message with the credentials cut out, whatever a library put in it. */
export function scrubbed(message: string, t: S3Target): string {
  let m = message;
  for (const secret of [t.secretAccessKey, t.accessKeyId]) if (secret) m = m.split(secret).join("[redacted]");
  return m;
}

function keyOf(t: S3Target, name: string): string {
  const p = t.prefix.replace(/^\/+/, "");
  return p === "" ? name : p.endsWith("/") ? `${p}${name}` : `${p}/${name}`;
}

async function uploadOnce(client: S3Client, key: string, path: string): Promise<void> {
  const writer = client.file(key).writer({ partSize: PART_BYTES, retry: 3 });
  try {
    for await (const chunk of Bun.file(path).stream()) {
      writer.write(chunk);
      // Keeps at most a part or so in memory: the upload is paced by the network, not the disk.
      await writer.flush();
    }
    await writer.end();
  } catch (e) {
    await Promise.resolve(writer.end(e instanceof Error ? e : new Error(String(e)))).catch(() => {});
    throw e;
  }
}

async function sha256Of(client: S3Client, key: string): Promise<{ sha256: string; bytes: number }> {
  const sha = new Bun.CryptoHasher("sha256");
  let bytes = 0;
  for await (const chunk of client.file(key).stream()) {
    sha.update(chunk);
    bytes += chunk.byteLength;
  }
  return { sha256: sha.digest("hex"), bytes };
}

/** Uploads the verified archive `path` as `name`, checks it, prunes older copies. Throws an Error whose message is safe to show. */
export async function copyToS3(
  t: S3Target,
  path: string,
  name: string,
  expected: { sha256: string; bytes: number },
  policy: Policy,
  zone: string,
  sleep: (ms: number) => Promise<void> = Bun.sleep,
): Promise<S3Outcome> {
  const client = clientOf(t);
  const key = keyOf(t, name);
  let lastError: unknown = null;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      await uploadOnce(client, key, path);
      lastError = null;
      break;
    } catch (e) {
      lastError = e;
      if (attempt < ATTEMPTS) await sleep(RETRY_PAUSE_MS.first * RETRY_PAUSE_MS.factor ** (attempt - 1));
    }
  }
  if (lastError) throw new Error(scrubbed(`upload of ${key} failed after ${ATTEMPTS} attempts: ${(lastError as Error).message ?? lastError}`, t));
  try {
    const back = await sha256Of(client, key);
    if (back.sha256 !== expected.sha256 || back.bytes !== expected.bytes) {
      await client.delete(key).catch(() => {});
      throw new Error(`the uploaded copy ${key} differs from the archive (read back ${back.bytes} bytes); it was deleted`);
    }
  } catch (e) {
    throw new Error(scrubbed(`checking ${key} failed: ${(e as Error).message}`, t));
  }
  const pruned: string[] = [];
  try {
    const listed: { key: string; name: string; at: Date }[] = [];
    let token: string | undefined;
    const base = key.slice(0, key.length - name.length);
    do {
      const page = await client.list({ prefix: base, continuationToken: token });
      for (const o of page.contents ?? []) {
        const n = o.key.slice(base.length);
        const at = instantOfName(n);
        if (at && !n.includes("/")) listed.push({ key: o.key, name: n, at });
      }
      token = page.isTruncated ? page.nextContinuationToken : undefined;
    } while (token);
    const drop = new Set(toPrune(listed, policy, zone).filter((n) => n !== name));
    for (const o of listed) {
      if (!drop.has(o.name)) continue;
      await client.delete(o.key);
      pruned.push(o.key);
    }
  } catch (e) {
    throw new Error(scrubbed(`the copy ${key} is stored and checked, but pruning older copies failed: ${(e as Error).message}`, t));
  }
  return { key, pruned };
}

