import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { BackupsOverview } from "../api/types";
import { t } from "../i18n";
import { ErrorBox, errorText, formatInstant, toast, toastError, useLoad } from "../ui";

/**
 * Settings → Server backups (administrators): each destination's last result, the next run,
 * "Back up now", and the schedule, retention and destinations. The S3 keys are write-only: the
 * fields show whether a key is set, and an empty field keeps it.
 */
export function ServerBackupsCard() {
  const overview = useLoad(() => api.get<BackupsOverview>("/admin/backups"), []);
  const [error, setError] = useState("");
  const o = overview.data;
  const runNow = async () => {
    try {
      await api.post("/admin/backups/run");
      toast(t.serverBackups.started);
      overview.reload();
      // The run finishes in the background: look again a little later.
      setTimeout(() => overview.reload(), 3000);
    } catch (err) {
      toastError(err);
    }
  };
  const save = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const text = (k: string) => String(f.get(k) ?? "").trim();
    const num = (k: string) => Number(text(k));
    const s3: Record<string, string> = { endpoint: text("endpoint"), region: text("region"), bucket: text("bucket"), prefix: text("prefix") };
    // Empty key fields keep the stored keys.
    if (text("access_key_id")) s3.access_key_id = text("access_key_id");
    if (text("secret_access_key")) s3.secret_access_key = text("secret_access_key");
    try {
      const next = await api.patch<BackupsOverview>("/admin/backups/settings", {
        schedule_enabled: f.get("schedule_enabled") === "on",
        user_archives: f.get("user_archives") === "on",
        schedule: text("schedule"),
        timezone: text("timezone"),
        local_dir: text("local_dir"),
        keep_daily: num("keep_daily"),
        keep_weekly: num("keep_weekly"),
        keep_monthly: num("keep_monthly"),
        s3,
      });
      overview.set(next);
      setError("");
      toast(t.serverBackups.saved);
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <div class="card stack">
      <h2>{t.serverBackups.title}</h2>
      <p class="muted">{t.serverBackups.intro}</p>
      {overview.error !== undefined && <ErrorBox error={overview.error} retry={overview.reload} />}
      {o && (
        <>
          <ul class="plain sessions">
            {o.destinations.map((d) => (
              <li key={d.destination}>
                <span>
                  <strong>{t.serverBackups.destination(d.destination)}</strong>{" "}
                  <span class="muted">{d.last_success_at ? t.serverBackups.lastGood(formatInstant(d.last_success_at)) : t.serverBackups.never}</span>
                  {d.last_result === "failure" && <span class="error"> {t.serverBackups.failed(formatInstant(d.last_attempt_at ?? ""), d.last_error ?? "")}</span>}
                </span>
              </li>
            ))}
          </ul>
          <p class="muted">{o.running ? t.serverBackups.running : o.next_run_at ? t.serverBackups.nextRun(formatInstant(o.next_run_at)) : t.serverBackups.scheduleOff}</p>
          <div class="buttons">
            <button onClick={runNow} disabled={o.running}>{t.serverBackups.runNow}</button>
          </div>
          <form class="stack" onSubmit={save} key={JSON.stringify(o.settings)}>
            <h3>{t.serverBackups.settings}</h3>
            <label class="inline"><input type="checkbox" name="schedule_enabled" defaultChecked={o.settings.schedule_enabled} /> {t.serverBackups.enabled}</label>
            <label class="inline"><input type="checkbox" name="user_archives" defaultChecked={o.settings.user_archives} /> {t.serverBackups.userArchives}</label>
            <div class="row">
              <label>{t.serverBackups.schedule}<input name="schedule" defaultValue={o.settings.schedule} maxLength={200} /></label>
              <label>{t.serverBackups.timezone}<input name="timezone" defaultValue={o.settings.timezone} maxLength={100} /></label>
            </div>
            <label>{t.serverBackups.localDir}<input name="local_dir" defaultValue={o.settings.local_dir} maxLength={4096} /></label>
            <div class="row">
              <label>{t.serverBackups.keepDaily}<input name="keep_daily" type="number" min={0} max={1000} defaultValue={String(o.settings.keep_daily)} /></label>
              <label>{t.serverBackups.keepWeekly}<input name="keep_weekly" type="number" min={0} max={1000} defaultValue={String(o.settings.keep_weekly)} /></label>
              <label>{t.serverBackups.keepMonthly}<input name="keep_monthly" type="number" min={0} max={1000} defaultValue={String(o.settings.keep_monthly)} /></label>
            </div>
            <h3>{t.serverBackups.s3}</h3>
            <div class="row">
              <label>{t.serverBackups.endpoint}<input name="endpoint" type="url" defaultValue={o.settings.s3.endpoint} maxLength={2000} /></label>
              <label>{t.serverBackups.region}<input name="region" defaultValue={o.settings.s3.region} maxLength={100} /></label>
            </div>
            <div class="row">
              <label>{t.serverBackups.bucket}<input name="bucket" defaultValue={o.settings.s3.bucket} maxLength={255} /></label>
              <label>{t.serverBackups.prefix}<input name="prefix" defaultValue={o.settings.s3.prefix} maxLength={1000} /></label>
            </div>
            <div class="row">
              <label>{t.serverBackups.accessKey}<input name="access_key_id" autocomplete="off" maxLength={1000} placeholder={o.settings.s3.access_key_id_set ? t.serverBackups.keySet : t.serverBackups.keyUnset} /></label>
              <label>{t.serverBackups.secretKey}<input name="secret_access_key" type="password" autocomplete="new-password" maxLength={1000} placeholder={o.settings.s3.secret_access_key_set ? t.serverBackups.keySet : t.serverBackups.keyUnset} /></label>
            </div>
            {error && <p class="error" role="alert">{error}</p>}
            <div class="buttons"><button>{t.save}</button></div>
          </form>
        </>
      )}
    </div>
  );
}
