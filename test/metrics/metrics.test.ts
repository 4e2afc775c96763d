import { afterAll, describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config";
import { Metrics, MetricsError } from "../../src/core/metrics";
import { RouteTemplates, UNMATCHED, requestMetrics } from "../../src/features/metrics/metrics.http";
import { ADMIN, makeTestApp, setupAdmin, type TestApp } from "../helpers/app";
import { PNG, upload } from "../helpers/multipart";
import { mkTask } from "../helpers/tasks";

/**
 * GET /metrics through the app's real fetch handler: off by default (404), the bearer token, what
 * it counts and how (route templates, never raw paths), and the registration API features use.
 */

export const TOKEN = "metrics-test-token-0123456789abcdefABCDEF";
const apps: TestApp[] = [];
afterAll(() => {
  for (const a of apps) a.close();
});
function app(config: Parameters<typeof makeTestApp>[0] = {}): TestApp {
  const a = makeTestApp(config);
  apps.push(a);
  return a;
}

const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });

/** The samples of the exposition: `name{labels}` → value (comments left out). */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

async function scrape(a: TestApp): Promise<{ text: string; s: Map<string, number> }> {
  const r = await a.client().get("/metrics", bearer(TOKEN));
  expect(r.status).toBe(200);
  return { text: r.text, s: samples(r.text) };
}

describe("off by default", () => {
  test("without APP_METRICS_TOKEN /metrics is the 404 of an unknown path, token or not, and nothing is measured", async () => {
    const a = app();
    expect(a.handle.core.metrics.enabled).toBe(false);
    const owner = await setupAdmin(a);
    const unknown = await owner.get("/api/v1/nowhere");
    expect(unknown.status).toBe(404);
    for (const c of [a.client(), owner]) {
      for (const opts of [{}, bearer(TOKEN)]) {
        const r = await c.get("/metrics", opts);
        expect(r.status).toBe(404);
        expect(r.headers.get("content-type")).toStartWith("application/problem+json");
        expect(r.headers.get("www-authenticate")).toBeNull();
        expect(r.body).toEqual(unknown.body);
      }
    }
  });
});

describe("the token", () => {
  const a = app({ config: { metricsToken: TOKEN } });

  test("none: 401 problem with WWW-Authenticate: Bearer realm=\"metrics\"", async () => {
    const r = await a.client().get("/metrics");
    expect(r.status).toBe(401);
    expect(r.body.code).toBe("unauthenticated");
    expect(r.headers.get("content-type")).toStartWith("application/problem+json");
    expect(r.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
  });

  test("a wrong one (same length, shorter, longer, the token's prefix, another scheme): 401 with error=\"invalid_token\"", async () => {
    const wrong = [TOKEN.slice(0, -1) + "X", TOKEN.slice(0, 10), TOKEN + "0", TOKEN.toUpperCase()];
    for (const t of wrong) {
      const r = await a.client().get("/metrics", bearer(t));
      expect({ t, status: r.status }).toEqual({ t, status: 401 });
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="metrics", error="invalid_token"');
    }
    for (const h of [`Basic ${btoa(`x:${TOKEN}`)}`, TOKEN, `Token ${TOKEN}`, `Bearer ${TOKEN} extra`, "Bearer "]) {
      const r = await a.client().get("/metrics", { headers: { authorization: h } });
      expect({ h, status: r.status }).toEqual({ h, status: 401 });
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    }
  });

  test("the right one: 200 in the Prometheus text format; the scheme's case does not matter", async () => {
    for (const h of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`]) {
      const r = await a.client().get("/metrics", { headers: { authorization: h } });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
      expect(r.text).toContain("# TYPE app_http_requests_total counter");
    }
  });

  test("a session is not enough: the admin's cookie without the token is 401", async () => {
    const b = app({ config: { metricsToken: TOKEN } });
    const admin = await setupAdmin(b);
    expect((await admin.get("/metrics")).status).toBe(401);
  });

  test("the setting: at least 32 characters of the RFC 6750 token alphabet, from APP_METRICS_TOKEN only", () => {
    expect(loadConfig({}, {}).metricsToken).toBeUndefined();
    expect(loadConfig({}, { APP_METRICS_TOKEN: "" }).metricsToken).toBeUndefined();
    expect(loadConfig({}, { APP_METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
    expect(() => loadConfig({}, { APP_METRICS_TOKEN: "x".repeat(31) })).toThrow(ConfigError);
    expect(() => loadConfig({}, { APP_METRICS_TOKEN: `${"x".repeat(32)} y` })).toThrow(/metricsToken: may contain only/);
    expect(() => loadConfig({}, { APP_METRICS_TOKEN: `${"x".repeat(32)}"` })).toThrow(ConfigError);
  });
});

describe("requests", () => {
  test("counted by route template and status, never by raw path; unknown methods are `other`", async () => {
    const a = app({ config: { metricsToken: TOKEN } });
    const owner = await setupAdmin(a);
    const t1 = await mkTask(owner, { title: "one" });
    const t2 = await mkTask(owner, { title: "two" });
    expect((await owner.get(`/api/v1/tasks/${t1.id}`)).status).toBe(200);
    expect((await owner.get(`/api/v1/tasks/${t2.id}`)).status).toBe(200);
    expect((await owner.get(`/api/v1/tasks/${t2.id}/`)).status).toBe(200); // the router's loose twin
    expect((await owner.get("/api/v1/tasks/00000000000000000000000000")).status).toBe(404);
    // Refused by the session guard before routing: still under the template.
    expect((await a.client().get(`/api/v1/tasks/${t1.id}`)).status).toBe(401);
    expect((await owner.request("HEAD", "/api/v1/health/live")).status).toBe(200);
    expect((await owner.request("PROPFIND", "/api/v1/tasks")).status).toBe(404);
    expect((await a.client().get("/some/client/route/12345")).status).toBe(200); // the web app's fallback

    const { text, s } = await scrape(a);
    const route = "/api/v1/tasks/:task_id";
    expect(s.get(`app_http_requests_total{method="GET",route="${route}",status="200"}`)).toBe(3);
    expect(s.get(`app_http_requests_total{method="GET",route="${route}",status="404"}`)).toBe(1);
    expect(s.get(`app_http_requests_total{method="GET",route="${route}",status="401"}`)).toBe(1);
    expect(s.get(`app_http_requests_total{method="POST",route="/api/v1/tasks",status="201"}`)).toBe(2);
    expect(s.get(`app_http_requests_total{method="POST",route="/api/v1/setup/initialize",status="201"}`)).toBe(1);
    expect(s.get(`app_http_requests_total{method="HEAD",route="/api/v1/health/live",status="200"}`)).toBe(1);
    expect(s.get('app_http_requests_total{method="PROPFIND",route="unmatched",status="404"}')).toBe(1);
    expect(s.get('app_http_requests_total{method="GET",route="/*",status="200"}')).toBe(1);
    expect(s.get(`app_http_request_duration_seconds_count{method="GET",route="${route}"}`)).toBe(5);
    expect(s.get(`app_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="${route}"}`)).toBe(5);
    // No id, no raw path, no method outside the list.
    for (const raw of [t1.id, t2.id, "12345"]) expect(text).not.toContain(raw);
  });

  test("a method outside HTTP's and WebDAV's is `other` (any token is a valid method: the label stays bounded)", async () => {
    const a = app({ config: { metricsToken: TOKEN } });
    const m = new Metrics(true);
    const r = requestMetrics(m, new RouteTemplates(a.handle.app.routes))!;
    for (const method of ["BREW", "X-ANYTHING-1", "X-ANYTHING-2"]) r.observe(method, "/api/v1/health/live", 405, 0.001);
    const { body } = await m.render();
    expect(body).toContain('app_http_requests_total{method="other",route="unmatched",status="405"} 3');
    expect(body).not.toContain("BREW");
    expect(requestMetrics(Metrics.off(), new RouteTemplates([]))).toBeNull();
  });

  test("every route of the app has a template that maps to itself", () => {
    const a = app();
    const routes = (a.handle.app.routes as { method: string; path: string }[]).filter((r) => r.method !== "WS");
    const t = new RouteTemplates(routes);
    for (const r of routes) {
      // A concrete path: each parameter filled in, a wildcard given two segments.
      const path = r.path.replace(/:[^/]+/g, "x1").replace(/\*$/, "a/b");
      const expected = routes.some((o) => o.method === r.method && o.path === path) ? path : r.path;
      expect({ r, found: t.find(r.method, path) }).toEqual({ r, found: expected });
    }
    expect(t.find("POST", "/nowhere")).toBe(UNMATCHED);
    expect(t.find("GET", "/api/v1/tasks/1/2/3/4")).toBe("/*");
  });
});

describe("the instance", () => {
  test("database and WAL sizes are the files' sizes", async () => {
    const a = app({ config: { metricsToken: TOKEN } });
    await setupAdmin(a);
    const { s } = await scrape(a);
    expect(s.get("app_sqlite_database_bytes")).toBe(statSync(join(a.dir, "app.db")).size);
    expect(s.get("app_sqlite_wal_bytes")).toBe(statSync(join(a.dir, "app.db-wal")).size);
    expect(s.get("app_sqlite_wal_bytes")).toBeGreaterThan(0);
    expect(s.get('app_info{version="0.1.0"}') ?? s.get(`app_info{version="${a.handle.core.version}"}`)).toBe(1);
    expect(s.get("process_resident_memory_bytes")).toBeGreaterThan(1024 * 1024);
  });

  test("attachment bytes: the sum over all users", async () => {
    const a = app({ config: { metricsToken: TOKEN } });
    const owner = await setupAdmin(a);
    expect((await scrape(a)).s.get("app_attachment_bytes")).toBe(0);
    const task = await mkTask(owner, { title: "with a file" });
    expect((await upload(a, owner, task.id, { filename: "a.png", type: "image/png", data: PNG })).status).toBe(201);
    expect((await upload(a, owner, task.id, { filename: "b.png", type: "image/png", data: PNG })).status).toBe(201);
    expect((await scrape(a)).s.get("app_attachment_bytes")).toBe(2 * PNG.byteLength);
  });

  test("login failures by reason, both series present from the start", async () => {
    const a = app({ config: { metricsToken: TOKEN, loginFreeFailures: 2 } });
    await setupAdmin(a);
    let { s } = await scrape(a);
    expect(s.get('app_login_failures_total{reason="invalid_credentials"}')).toBe(0);
    expect(s.get('app_login_failures_total{reason="rate_limited"}')).toBe(0);
    const c = a.client();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await c.post("/api/v1/auth/login", { username: ADMIN.username, password: `wrong-${i}` })).status);
    expect(statuses).toEqual([401, 401, 429, 429]);
    expect((await c.post("/api/v1/auth/login", { username: "nobody-at-all", password: "whatever-1" })).status).toBe(401);
    ({ s } = await scrape(a));
    expect(s.get('app_login_failures_total{reason="invalid_credentials"}')).toBe(3);
    expect(s.get('app_login_failures_total{reason="rate_limited"}')).toBe(2);
  });

  test("event-loop lag: a loop held for a second shows in the histogram and the max gauge (reset by each scrape)", async () => {
    const a = app({ config: { metricsToken: TOKEN } });
    await scrape(a); // resets the max
    Bun.sleepSync(1000); // holds the event loop, as a long bun:sqlite query would
    await Bun.sleep(50); // the sampler's timer fires (late)
    const { s } = await scrape(a);
    // The timer was due at most 500 ms into the second: it fired at least 500 ms late.
    expect(s.get("app_event_loop_lag_max_seconds")).toBeGreaterThanOrEqual(0.45);
    expect(s.get('app_event_loop_lag_seconds_bucket{le="0.25"}')).toBeLessThan(s.get("app_event_loop_lag_seconds_count")!);
    expect((await scrape(a)).s.get("app_event_loop_lag_max_seconds")).toBeLessThan(0.45);
  });
});

describe("the registration API (what other features use)", () => {
  test("a feature's counter, labelled gauge and histogram appear in the exposition", async () => {
    const a = app({ config: { metricsToken: TOKEN } });
    const m = a.handle.core.metrics;
    const sent = m.counter({ name: "app_test_sent_total", help: "things sent", labelNames: ["channel"] });
    let ages = [{ labels: { destination: "local" }, value: 12 }, { labels: { destination: "s3" }, value: 7 }];
    m.gauge({ name: "app_test_age_seconds", help: "age per destination", labelNames: ["destination"], collect: () => ages });
    const h = m.histogram({ name: "app_test_duration_seconds", help: "how long", buckets: [1, 10] });
    sent.inc({ channel: "email" });
    sent.inc({ channel: "email" }, 2);
    h.observe({}, 5);
    let { s } = await scrape(a);
    expect(s.get('app_test_sent_total{channel="email"}')).toBe(3);
    expect(s.get('app_test_age_seconds{destination="local"}')).toBe(12);
    expect(s.get('app_test_age_seconds{destination="s3"}')).toBe(7);
    expect(s.get('app_test_duration_seconds_bucket{le="10"}')).toBe(1);
    expect(s.get('app_test_duration_seconds_bucket{le="1"}')).toBe(0);
    // A label set the collect function no longer reports is gone.
    ages = [{ labels: { destination: "local" }, value: 13 }];
    ({ s } = await scrape(a));
    expect(s.get('app_test_age_seconds{destination="s3"}')).toBeUndefined();
    expect(s.get('app_test_age_seconds{destination="local"}')).toBe(13);
  });

  test("names are checked, on or off: the Prometheus rules, once per app, a help text, ascending buckets", () => {
    for (const m of [new Metrics(true), Metrics.off()]) {
      m.counter({ name: "app_x_total", help: "x" });
      expect(() => m.gauge({ name: "app_x_total", help: "again" })).toThrow(MetricsError);
      expect(() => m.counter({ name: "app-bad", help: "x" })).toThrow(MetricsError);
      expect(() => m.counter({ name: "app_y_total", help: " " })).toThrow(MetricsError);
      expect(() => m.counter({ name: "app_z_total", help: "z", labelNames: ["__reserved"] })).toThrow(MetricsError);
      expect(() => m.counter({ name: "app_w_total", help: "w", labelNames: ["bad-label"] })).toThrow(MetricsError);
      expect(() => m.histogram({ name: "app_h_seconds", help: "h", buckets: [1, 1] })).toThrow(MetricsError);
    }
  });

  test("off, every handle is a no-op and there is nothing to render", async () => {
    const m = Metrics.off();
    m.counter({ name: "app_a_total", help: "a", labelNames: ["k"] }).inc({ k: "v" });
    m.gauge({ name: "app_b", help: "b" }).set({}, 1);
    m.histogram({ name: "app_c_seconds", help: "c", buckets: [1] }).observe({}, 1);
    expect(m.render()).rejects.toThrow(MetricsError);
  });
});
