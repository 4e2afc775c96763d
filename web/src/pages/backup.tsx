import { useState } from "preact/hooks";
import { ApiError, networkError, request, upload } from "../api/client";
import type { BackupRestoreResult, LegacyRestoreResult, Preflight } from "../api/types";
import { t } from "../i18n";
import { ErrorBox, errorText, formatInstant, NotAvailable, toast, useLoad, useTitle } from "../ui";

/** Which backup endpoints this server has, read from its OpenAPI document (features land over time). */
async function capabilities(): Promise<Set<string>> {
  const doc = await fetch("/api/openapi.json", { credentials: "same-origin" }).then(
    (r) => (r.ok ? r.json() : { paths: {} }),
    () => Promise.reject(networkError()),
  );
  const out = new Set<string>();
  for (const [path, ops] of Object.entries((doc as { paths: Record<string, object> }).paths ?? {})) for (const m of Object.keys(ops)) out.add(`${m} ${path}`);
  return out;
}

export function BackupPage() {
  useTitle(t.backup.title);
  const caps = useLoad(capabilities, []);
  if (caps.error) return <ErrorBox error={caps.error} retry={caps.reload} />;
  if (!caps.data) return <p class="muted">{t.loading}</p>;
  const has = (op: string) => caps.data!.has(op);
  return (
    <section class="narrow">
      <header class="page-header"><h1>{t.backup.title}</h1></header>
      <div class="card stack">
        <h2>{t.backup.full}</h2>
        <p class="muted">{t.backup.fullText}</p>
        {has("get /api/v1/backup/export.zip") ? (
          <p><a class="button primary" href="/api/v1/backup/export.zip" download>{t.backup.download}</a></p>
        ) : (
          <NotAvailable />
        )}
      </div>
      <div class="card stack">
        <h2>{t.backup.restore}</h2>
        <p class="muted">{t.backup.restoreText}</p>
        {has("post /api/v1/backup/preflight") && has("post /api/v1/backup/restore") ? <FullRestore /> : <NotAvailable />}
      </div>
      <div class="card stack">
        <h2>{t.backup.legacy}</h2>
        <p class="muted">{t.backup.legacyText}</p>
        {has("get /api/v1/export") ? (
          <p>
            <a class="button" href="/api/v1/export" download="app-export.json">{t.backup.exportJson}</a>{" "}
            {has("get /api/v1/export.csv") && <a class="button" href="/api/v1/export.csv" download="app-export.csv">{t.backup.exportCsv}</a>}
          </p>
        ) : (
          <NotAvailable />
        )}
        {has("post /api/v1/restore") && <LegacyRestore csv={has("post /api/v1/restore.csv")} />}
      </div>
    </section>
  );
}

/** An entity key of the API's counts (`recurrence_exceptions`) as a person calls it. */
function entityName(key: string): string {
  return t.backup.entities[key] ?? key.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
}

function Counts({ counts }: { counts: Record<string, number> }) {
  return (
    <table class="counts">
      <thead><tr><th scope="col">{t.backup.kind}</th><th scope="col">{t.backup.count}</th></tr></thead>
      <tbody>{Object.entries(counts).map(([k, n]) => <tr key={k} data-entity={k}><th scope="row">{entityName(k)}</th><td>{n.toLocaleString()}</td></tr>)}</tbody>
    </table>
  );
}

function ModePicker({ mode, setMode, name }: { mode: string; setMode: (m: "merge" | "replace") => void; name: string }) {
  return (
    <fieldset class="modes">
      <legend>{t.fields.mode}</legend>
      <label class="inline"><input type="radio" name={name} value="merge" checked={mode === "merge"} onChange={() => setMode("merge")} /> {t.backup.merge}</label>
      <label class="inline"><input type="radio" name={name} value="replace" checked={mode === "replace"} onChange={() => setMode("replace")} /> {t.backup.replace}</label>
    </fieldset>
  );
}

function FullRestore() {
  const [file, setFile] = useState<File | null>(null);
  const [mode, setMode] = useState<"merge" | "replace">("merge");
  const [progress, setProgress] = useState<number | null>(null);
  const [pre, setPre] = useState<Preflight | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const check = async () => {
    if (!file) return;
    setError(null);
    setPre(null);
    setProgress(0);
    try {
      setPre(await upload<Preflight>("/backup/preflight", file, setProgress, { mode }));
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(-1, "error", errorText(e)));
    } finally {
      setProgress(null);
    }
  };
  const restore = async () => {
    if (!pre) return;
    setBusy(true);
    try {
      const r = await request<BackupRestoreResult>("POST", "/backup/restore", { json: { preflight_token: pre.preflight_token, mode } });
      toast(`${t.backup.restored} ${Object.entries(r.counts).map(([k, n]) => `${entityName(k)}: ${n}`).join(", ")}`);
      setPre(null);
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(-1, "error", errorText(e)));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="stack" data-testid="full-restore">
      <label>{t.fields.file}<input type="file" accept=".zip,application/zip" onChange={(e) => { setFile((e.currentTarget as HTMLInputElement).files?.[0] ?? null); setPre(null); }} /></label>
      <ModePicker mode={mode} setMode={(m) => { setMode(m); setPre(null); }} name="backup-mode" />
      <div class="buttons"><button onClick={check} disabled={!file || progress !== null}>{t.backup.check}</button></div>
      {progress !== null && <progress max={1} value={progress} />}
      {error && (
        <div class="error-box" role="alert">
          {error.code === "backup_invalid" ? t.backup.invalid : errorText(error)}
          {/* What is wrong inside the file, record by record (other problems are said in the sentence above). */}
          {error.code === "backup_invalid" && error.errors.length > 0 && <ul>{error.errors.map((x, i) => <li key={i}>{x.path}: {x.message}</li>)}</ul>}
        </div>
      )}
      {pre && (
        <div class="preflight" data-testid="preflight">
          <h3>{t.backup.summary}</h3>
          <p class="muted">{t.backup.createdAt}: {formatInstant(pre.summary.created_at)} · {t.backup.version}: {pre.summary.app_version}</p>
          <Counts counts={pre.counts} />
          {mode === "replace" && <p class="warning">{t.backup.replaceWarning}</p>}
          <div class="buttons"><button class={mode === "replace" ? "danger" : "primary"} disabled={busy} onClick={restore}>{mode === "merge" ? t.backup.confirmMerge : t.backup.confirmReplace}</button></div>
        </div>
      )}
    </div>
  );
}

function LegacyRestore({ csv }: { csv: boolean }) {
  const [file, setFile] = useState<File | null>(null);
  const [mode, setMode] = useState<"merge" | "replace">("merge");
  const [result, setResult] = useState<LegacyRestoreResult["counts"] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const go = async () => {
    if (!file) return;
    setError(null);
    setResult(null);
    if (mode === "replace" && !confirm(t.backup.replaceWarning)) return;
    try {
      const isCsv = file.name.toLowerCase().endsWith(".csv");
      const r = await request<LegacyRestoreResult>("POST", isCsv && csv ? "/restore.csv" : "/restore", {
        body: await file.text(),
        headers: { "content-type": isCsv ? "text/csv" : "application/json" },
        query: { mode },
      });
      setResult(r.counts);
      toast(t.backup.restored);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <div class="stack">
      <h3>{t.backup.legacyRestore}</h3>
      <label>{t.fields.file}<input type="file" accept=".json,.csv,application/json,text/csv" onChange={(e) => setFile((e.currentTarget as HTMLInputElement).files?.[0] ?? null)} /></label>
      <ModePicker mode={mode} setMode={setMode} name="legacy-mode" />
      <div class="buttons"><button onClick={go} disabled={!file}>{t.restore}</button></div>
      {error !== null && <ErrorBox error={error} />}
      {result && <Counts counts={result} />}
    </div>
  );
}
