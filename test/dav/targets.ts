// Where the CalDAV client tests (tsdav, python-caldav, vdirsyncer + todoman, the Radicale comparison)
// send their requests. Without APP_EXE: the app in this process behind a real listening socket (fast;
// the main suite). With APP_EXE (e.g. dist/app, as .ci/run's executable phase sets it): the program
// under test as its own process (--trust-proxy, fresh data directory) behind the README's nginx site
// and behind its Caddy site, each with TLS on https://localhost:<port> (test/helpers/proxy.ts), so
// the clients discover, sync and write through exactly what the README tells a user to run. A target
// whose proxy is not installed is skipped with a message.
import type { AppHandle } from "../../src/app";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { ADMIN, dump, dumpSqlite, makeTestApp, setupAdmin, TestClient } from "../helpers/app";
import { haveCaddy, haveNginx, haveOpenssl, startReadmeCaddy, startReadmeNginx, startUpstream, type RunningProxy } from "../helpers/proxy";
import { serve } from "../helpers/server";

export interface DavTargetSpec {
  /** Shown in the describe block's name. */
  name: string;
  kind: "in-process" | "nginx" | "caddy";
  /** Why this target cannot run here (a tool missing), else null. */
  missing: string | null;
}

/** The targets of this run: in process without APP_EXE; with it, the executable behind the README's nginx and its Caddy. */
export function davTargets(file: string): DavTargetSpec[] {
  if (!process.env.APP_EXE) return [{ name: "in process", kind: "in-process", missing: null }];
  const root = resolve(import.meta.dir, "../..");
  const exe = relative(root, resolve(root, process.env.APP_EXE));
  const specs: DavTargetSpec[] = [
    { name: `${exe} behind the README's nginx (https)`, kind: "nginx", missing: !haveNginx || !haveOpenssl ? "nginx and openssl (apt-get install -y nginx openssl)" : null },
    { name: `${exe} behind the README's Caddy (https)`, kind: "caddy", missing: !haveCaddy || !haveOpenssl ? "caddy and openssl (apt-get install -y caddy openssl)" : null },
  ];
  for (const s of specs) if (s.missing) console.warn(`${file}: "${s.name}" skipped: needs ${s.missing}`);
  return specs;
}

export interface DavTarget {
  /** The origin clients connect to: http://127.0.0.1:<port> in process, https://localhost:<port> behind a proxy. */
  base: string;
  /** The admin (first-run setup done), signed in through the same way in: the web app's side of a sync. */
  web: TestClient;
  /** `fetch` that trusts the target's certificate (what tsdav and raw requests use). */
  fetch: typeof fetch;
  /** The PEM file of the proxy's self-signed certificate, for clients to verify against; null over plain http. */
  ca: string | null;
  /** A new web-app client (its own cookie jar, signed out) the same way in. */
  client(): TestClient;
  /** Every row of the server's database (test/helpers/app.ts dump; read-only from this process when the server is one). */
  dump(ignore?: string[]): Record<string, unknown[]>;
  stop(): Promise<void>;
}

/** A new user made by the admin (`target.web`), signed in: its web-app client. */
export async function signedInUserOn(target: DavTarget, username: string): Promise<TestClient> {
  const password = `${username}-password`;
  const r = await target.web.post("/api/v1/users", { username, password });
  if (r.status !== 201) throw new Error(`user creation failed: ${r.status} ${r.text}`);
  const c = target.client();
  const l = await c.post("/api/v1/auth/login", { username, password });
  if (l.status !== 200) throw new Error(`login failed: ${l.status} ${l.text}`);
  return c;
}

/** Starts a target: a fresh server (and proxy) with the admin set up. */
export async function startDavTarget(spec: DavTargetSpec): Promise<DavTarget> {
  if (spec.kind === "in-process") {
    const app = makeTestApp();
    const server = serve(app);
    const web = await setupAdmin(app);
    return {
      base: server.base,
      web,
      fetch: globalThis.fetch,
      ca: null,
      client: () => app.client(),
      dump: (ignore) => dump(app.db, ignore),
      stop: async () => {
        server.stop();
        app.close();
      },
    };
  }
  const upstream = await startUpstream();
  let proxy: RunningProxy;
  try {
    proxy = spec.kind === "nginx" ? await startReadmeNginx(upstream.port) : await startReadmeCaddy(upstream.port);
  } catch (e) {
    await upstream.stop();
    throw e;
  }
  const base = `https://localhost:${proxy.port}`;
  const ca = readFileSync(proxy.certificate, "utf8");
  // Bun's fetch takes the certificate to trust as `tls.ca` (not in the DOM RequestInit type).
  const trusting = ((input: string | URL | Request, init?: RequestInit) => globalThis.fetch(input, { ...init, tls: { ca } } as RequestInit)) as typeof fetch;
  // The web app's requests through the proxy: a browser on the https page sends its Origin on writes.
  const handle = {
    fetch: (req: Request) => {
      const headers = new Headers(req.headers);
      if (!["GET", "HEAD"].includes(req.method)) headers.set("origin", base);
      return trusting(new Request(req, { headers }));
    },
  } as unknown as AppHandle; // TestClient only calls handle.fetch
  const client = () => new TestClient(handle, "127.0.0.1", base);
  const web = client();
  const setup = await web.post("/api/v1/setup/initialize", ADMIN);
  if (setup.status !== 201) {
    await proxy.stop();
    await upstream.stop();
    throw new Error(`setup through ${spec.kind} failed: ${setup.status} ${setup.text}`);
  }
  return {
    base,
    web,
    fetch: trusting,
    ca: proxy.certificate,
    client,
    dump: (ignore) => {
      const sqlite = new Database(`${upstream.dataDir}/app.db`, { readonly: true });
      try {
        return dumpSqlite(sqlite, ignore);
      } finally {
        sqlite.close();
      }
    },
    stop: async () => {
      await proxy.stop();
      await upstream.stop();
    },
  };
}
