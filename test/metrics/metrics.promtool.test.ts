import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { spawnServer } from "../helpers/spawn";

/**
 * Prometheus' own checker on what we serve and document (Debian's `prometheus` package provides
 * promtool; .ci/run installs it): the exposition of a running server (`promtool check metrics`:
 * format and naming lint), the README's scrape job (`check config`), its alert rule (`check rules`)
 * and what that rule does (`test rules`: fires for a backup older than two days, not for a fresh one).
 */

const promtool = Bun.which("promtool");
if (!promtool) console.warn("metrics.promtool.test.ts: skipped, promtool is missing (apt-get install -y prometheus)");

const TOKEN = "promtool-test-token-0123456789abcdefABCDEF";
const README = readFileSync(resolve(import.meta.dir, "../../README.md"), "utf8");
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});
function tempRoot(): string {
  const d = mkdtempSync(join(tmpdir(), "app-promtool-"));
  roots.push(d);
  return d;
}

/** The README's YAML block whose first line is `# <title>`. */
function readmeYaml(title: string): string {
  const at = README.indexOf(`\`\`\`yaml\n# ${title}\n`);
  expect({ title, found: at !== -1 }).toEqual({ title, found: true });
  const start = at + "```yaml\n".length;
  return README.slice(start, README.indexOf("```", start));
}

function run(args: string[], stdin?: string): { code: number; out: string } {
  const p = Bun.spawnSync([promtool!, ...args], { stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, out: p.stdout.toString() + p.stderr.toString() };
}

describe.skipIf(!promtool)("promtool", () => {
  test("check metrics: a running server's exposition after some traffic passes the format check and the lint", async () => {
    const s = await spawnServer({ env: { APP_METRICS_TOKEN: TOKEN } });
    try {
      const setup = await fetch(`${s.base}/api/v1/setup/initialize`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "owner", password: "correct horse battery" }),
      });
      expect(setup.status).toBe(201);
      await fetch(`${s.base}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "owner", password: "wrong password x" }) });
      await fetch(`${s.base}/api/v1/tasks/some-id`);
      await fetch(`${s.base}/nowhere/else`);
      await Bun.sleep(600); // an event-loop lag sample
      const r = await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(r.status).toBe(200);
      const text = await r.text();
      expect(text).toContain('app_http_requests_total{method="POST",route="/api/v1/setup/initialize",status="201"} 1');
      expect(text).toContain('app_login_failures_total{reason="invalid_credentials"} 1');
      expect(text).toMatch(/^app_event_loop_lag_seconds_count [1-9]/m);
      expect(run(["check", "metrics"], text)).toEqual({ code: 0, out: "" });
    } finally {
      await s.stop();
    }
  }, 60_000);

  test("the README's alert rules pass check rules, and the scrape job with them passes check config", () => {
    const dir = tempRoot();
    const rules = join(dir, "app.yml");
    writeFileSync(rules, readmeYaml("/etc/prometheus/rules/app.yml"));
    const checked = run(["check", "rules", rules]);
    expect(checked.code).toBe(0);
    expect(checked.out).toContain("SUCCESS: 2 rules found");

    const tokenFile = join(dir, "token");
    writeFileSync(tokenFile, TOKEN);
    const scrape = readmeYaml("prometheus.yml");
    expect(scrape).toContain("credentials_file: /etc/prometheus/app-metrics-token");
    const config = join(dir, "prometheus.yml");
    writeFileSync(config, `rule_files:\n  - ${rules}\n${scrape.replace("/etc/prometheus/app-metrics-token", tokenFile)}`);
    const cfg = run(["check", "config", config]);
    expect({ code: cfg.code, out: cfg.out }).toEqual({ code: 0, out: expect.stringContaining("SUCCESS") });
  }, 30_000);

  test("test rules: AppBackupTooOld fires for a backup older than two days (or none ever), not for a fresh one", () => {
    const dir = tempRoot();
    writeFileSync(join(dir, "app.yml"), readmeYaml("/etc/prometheus/rules/app.yml"));
    // One sample every 5 minutes for 60 hours. `stale`: the last success stays at t=0; `fresh`: a success
    // every hour; `never`: 0, the value before any backup succeeded.
    const tests = `rule_files:
  - app.yml
evaluation_interval: 5m
tests:
  - interval: 5m
    input_series:
      - series: 'app_backup_last_success_timestamp_seconds{job="app",instance="stale"}'
        values: '86400x720'
      - series: 'app_backup_last_success_timestamp_seconds{job="app",instance="fresh"}'
        values: '0+300x720'
      - series: 'up{job="app",instance="stale"}'
        values: '1x720'
    alert_rule_test:
      - eval_time: 71h
        alertname: AppBackupTooOld
        exp_alerts: []
      - eval_time: 59h
        alertname: AppBackupTooOld
        exp_alerts: []
      - eval_time: 24h
        alertname: AppDown
        exp_alerts: []
  - interval: 5m
    input_series:
      - series: 'app_backup_last_success_timestamp_seconds{job="app",instance="stale"}'
        values: '0x720'
      - series: 'app_backup_last_success_timestamp_seconds{job="app",instance="fresh"}'
        values: '0+300x720'
      - series: 'up{job="app",instance="down"}'
        values: '0x720'
    alert_rule_test:
      - eval_time: 47h
        alertname: AppBackupTooOld
        exp_alerts: []
      - eval_time: 49h
        alertname: AppBackupTooOld
        exp_alerts:
          - exp_labels: { severity: warning, job: app, instance: stale }
            exp_annotations:
              summary: "stale: no successful backup for more than 2 days"
      - eval_time: 1h
        alertname: AppDown
        exp_alerts:
          - exp_labels: { severity: critical, job: app, instance: down }
            exp_annotations:
              summary: "down: /metrics cannot be scraped"
`;
    writeFileSync(join(dir, "app.test.yml"), tests);
    const r = Bun.spawnSync([promtool!, "test", "rules", "app.test.yml"], { cwd: dir, stdout: "pipe", stderr: "pipe" });
    const out = r.stdout.toString() + r.stderr.toString();
    expect({ code: r.exitCode, out }).toEqual({ code: 0, out: expect.stringContaining("SUCCESS") });
  }, 60_000);
});
