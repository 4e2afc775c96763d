import { forgetOfflineCopy } from "../offline";
import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { SessionInfo, User } from "../api/types";
import { t } from "../i18n";
import { navigate } from "../router";
import { ServerBackupsCard } from "./server-backups";
import { TokensCard } from "./settings-tokens";
import { ReminderSettings } from "./notifications";
import { FeedsCard } from "./settings-feeds";
import { ErrorBox, errorText, formatInstant, toast, toastError, useLoad, useTitle } from "../ui";

const ZONES: string[] = (() => {
  try {
    return Intl.supportedValuesOf("timeZone");
  } catch {
    return ["UTC"];
  }
})();

export function SettingsPage({ user, onUser, onSignedOut }: { user: User; onUser: (u: User) => void; onSignedOut: () => void }) {
  useTitle(t.settings.title);
  const sessions = useLoad(() => api.get<{ items: SessionInfo[] }>("/sessions"), []);
  const [pwError, setPwError] = useState("");
  const saveProfile = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    try {
      onUser(await api.patch<User>("/me", { display_name: String(f.get("display_name")), timezone: String(f.get("timezone")) }));
      toast(t.settings.saved);
    } catch (err) {
      toastError(err);
    }
  };
  const changePassword = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    setPwError("");
    try {
      await api.post("/auth/change-password", { current_password: f.get("current_password"), new_password: f.get("new_password") });
      form.reset();
      toast(t.settings.passwordChanged);
      sessions.reload();
    } catch (err) {
      setPwError(errorText(err));
    }
  };
  const end = async (path: string) => {
    try {
      await api.del(path);
    } catch (e) {
      toastError(e);
    }
    sessions.reload();
  };
  const logout = async () => {
    try {
      await api.post("/auth/logout");
    } catch {
      // signed out either way
    }
    await forgetOfflineCopy();
    navigate("/", { replace: true });
    onSignedOut();
  };
  const zones = ZONES.includes(user.timezone) ? ZONES : [user.timezone, ...ZONES];
  return (
    <section class="narrow">
      <header class="page-header">
        <h1>{t.settings.title}</h1>
        <span class="spacer" />
        <button onClick={logout}>{t.nav.logout}</button>
      </header>
      <form class="card stack" onSubmit={saveProfile}>
        <h2>{t.settings.profile}</h2>
        <p class="muted">{t.fields.username}: {user.username}</p>
        <label>{t.fields.displayName}<input name="display_name" required maxLength={100} defaultValue={user.display_name} /></label>
        <label>{t.fields.timezone}<select name="timezone" defaultValue={user.timezone}>{zones.map((z) => <option key={z} value={z}>{z}</option>)}</select></label>
        <div class="buttons"><button class="primary">{t.save}</button></div>
      </form>
      <form class="card stack" onSubmit={changePassword}>
        <h2>{t.settings.password}</h2>
        <input type="text" name="username" autocomplete="username" value={user.username} hidden readOnly />
        <label>{t.fields.currentPassword}<input name="current_password" type="password" autocomplete="current-password" required /></label>
        <label>{t.fields.newPassword}<input name="new_password" type="password" autocomplete="new-password" required minLength={8} maxLength={1024} /></label>
        {pwError && <p class="error" role="alert">{pwError}</p>}
        <div class="buttons"><button class="primary">{t.save}</button></div>
      </form>
      <div class="card">
        <h2>{t.settings.sessions}</h2>
        {sessions.error !== undefined && <ErrorBox error={sessions.error} retry={sessions.reload} />}
        <ul class="plain sessions">
          {(sessions.data?.items ?? []).map((s) => (
            <li key={s.id}>
              <div>
                <strong>{s.current ? t.settings.thisDevice : (s.user_agent ?? "?").slice(0, 80)}</strong>
                <div class="muted small">{s.ip ?? ""} · {t.settings.lastSeen(formatInstant(s.last_seen_at))}</div>
              </div>
              {!s.current && <button class="small" onClick={() => end(`/sessions/${s.id}`)}>{t.settings.endSession}</button>}
            </li>
          ))}
        </ul>
        <button onClick={() => end("/sessions/others")}>{t.settings.endOthers}</button>
      </div>
      <TokensCard user={user} />
      <ReminderSettings isAdmin={user.is_admin} />
      <FeedsCard />
      {user.is_admin && <UsersCard />}
      {user.is_admin && <ServerBackupsCard />}
      <div class="card">
        <h2>{t.settings.shortcuts}</h2>
        <table class="shortcuts"><tbody>{t.shortcuts.map(([k, d]) => <tr key={k}><td><kbd>{k}</kbd></td><td>{d}</td></tr>)}</tbody></table>
      </div>
    </section>
  );
}

/** Admins add the other people of the household; each gets their own data and inbox. */
function UsersCard() {
  const users = useLoad(() => api.get<{ items: User[] }>("/users"), []);
  const add = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    const display = String(f.get("display_name") ?? "").trim();
    try {
      await api.post("/users", { username: f.get("username"), password: f.get("password"), ...(display ? { display_name: display } : {}) });
      form.reset();
      toast(t.settings.userAdded);
      users.reload();
    } catch (err) {
      toastError(err);
    }
  };
  return (
    <div class="card stack">
      <h2>{t.settings.users}</h2>
      {users.error !== undefined && <ErrorBox error={users.error} retry={users.reload} />}
      <ul class="plain sessions">
        {(users.data?.items ?? []).map((u) => (
          <li key={u.id}>
            <span><strong>{u.display_name}</strong> <span class="muted">{u.username}{u.is_admin ? ` · ${t.settings.admin}` : ""}</span></span>
          </li>
        ))}
      </ul>
      <form class="stack" onSubmit={add}>
        <h3>{t.settings.addUser}</h3>
        <div class="row">
          <label>{t.fields.username}<input name="username" required maxLength={64} autocomplete="off" /></label>
          <label>{t.fields.displayName}<input name="display_name" maxLength={100} /></label>
          <label>{t.fields.password}<input name="password" type="password" required minLength={8} maxLength={1024} autocomplete="new-password" /></label>
        </div>
        <div class="buttons"><button>{t.settings.addUser}</button></div>
      </form>
    </div>
  );
}
