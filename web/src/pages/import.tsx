import { useState } from "preact/hooks";
import { ApiError, request, upload } from "../api/client";
import { t } from "../i18n";
import { errorText, toast, useTitle } from "../ui";

// Import from TickTick, Todoist or an .ics file: upload → preview (counts, every skipped or
// changed row with its line) → import with the preview's token (POST /import/preview, /import).

type Format = "ticktick" | "todoist" | "ics";
const FORMATS: Format[] = ["ticktick", "todoist", "ics"];
const ACCEPT: Record<Format, string> = { ticktick: ".csv,text/csv", todoist: ".csv,.zip,text/csv,application/zip", ics: ".ics,text/calendar" };

interface Note {
  line?: number;
  item: string;
  reason?: string;
  what?: string;
}
interface Preview {
  import_token: string;
  expires_at: string;
  format: Format;
  counts: Record<string, number>;
  skipped: Note[];
  changed: Note[];
}
interface Result {
  format: Format;
  counts: Record<string, number>;
  already_imported?: boolean;
}

function Notes({ title, notes, field, testid }: { title: string; notes: Note[]; field: "reason" | "what"; testid: string }) {
  return (
    <div class="stack" data-testid={testid}>
      <h3>{title} ({notes.length})</h3>
      {notes.length === 0 ? (
        <p class="muted">{t.imports.none}</p>
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label={title}>
          <table class="counts">
            <thead>
              <tr><th scope="col">{t.imports.line}</th><th scope="col">{t.imports.item}</th><th scope="col">{field === "reason" ? t.imports.reason : t.imports.what}</th></tr>
            </thead>
            <tbody>
              {notes.map((n, i) => (
                <tr key={i}><td>{n.line ?? ""}</td><th scope="row">{n.item}</th><td>{n[field]}</td></tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

export function ImportPage() {
  useTitle(t.imports.title);
  const [format, setFormat] = useState<Format>("ticktick");
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const asApiError = (e: unknown) => (e instanceof ApiError ? e : new ApiError(-1, "error", errorText(e)));
  const check = async () => {
    if (!file) return;
    setError(null);
    setPreview(null);
    setProgress(0);
    try {
      setPreview(await upload<Preview>("/import/preview", file, setProgress, { format }));
    } catch (e) {
      setError(asApiError(e));
    } finally {
      setProgress(null);
    }
  };
  const go = async () => {
    if (!preview) return;
    setBusy(true);
    try {
      const r = await request<Result>("POST", "/import", { json: { import_token: preview.import_token } });
      toast(r.already_imported ? t.imports.already : `${t.imports.done} ${Object.entries(r.counts).filter(([k]) => k !== "reminders").map(([k, n]) => `${t.imports.kinds[k] ?? k}: ${n}`).join(", ")}`);
      setPreview(null);
    } catch (e) {
      setError(asApiError(e));
      setPreview(null);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="narrow">
      <header class="page-header"><h1>{t.imports.title}</h1></header>
      <div class="card stack">
        <p class="muted">{t.imports.intro}</p>
        <fieldset class="modes">
          <legend>{t.imports.format}</legend>
          {FORMATS.map((f) => (
            <label class="inline" key={f}>
              <input type="radio" name="import-format" value={f} checked={format === f} onChange={() => { setFormat(f); setPreview(null); }} /> {t.imports.formats[f]}
            </label>
          ))}
        </fieldset>
        <label>
          {t.fields.file}
          <input type="file" accept={ACCEPT[format]} onChange={(e) => { setFile((e.currentTarget as HTMLInputElement).files?.[0] ?? null); setPreview(null); setError(null); }} />
        </label>
        <div class="buttons"><button onClick={check} disabled={!file || progress !== null}>{t.imports.preview}</button></div>
        {progress !== null && <progress max={1} value={progress} aria-label={t.imports.preview} />}
        {error && (
          <div class="error-box" role="alert">
            {error.code === "import_invalid" ? t.imports.invalid : error.code === "token_consumed" || error.code === "token_invalid" ? t.imports.expired : errorText(error)}
            {error.code === "import_invalid" && error.errors.length > 0 && <ul>{error.errors.map((x, i) => <li key={i}>{x.path}: {x.message}</li>)}</ul>}
          </div>
        )}
        {preview && (
          <div class="preflight stack" data-testid="import-preview">
            <h2>{t.imports.willCreate}</h2>
            <table class="counts">
              <thead><tr><th scope="col">{t.backup.kind}</th><th scope="col">{t.backup.count}</th></tr></thead>
              <tbody>{Object.entries(preview.counts).map(([k, n]) => <tr key={k} data-kind={k}><th scope="row">{t.imports.kinds[k] ?? k}</th><td>{n.toLocaleString()}</td></tr>)}</tbody>
            </table>
            <Notes title={t.imports.skipped} notes={preview.skipped} field="reason" testid="import-skipped" />
            <Notes title={t.imports.changed} notes={preview.changed} field="what" testid="import-changed" />
            <div class="buttons"><button class="primary" disabled={busy} onClick={go}>{t.imports.confirm}</button></div>
          </div>
        )}
      </div>
    </section>
  );
}
