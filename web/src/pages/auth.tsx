import { useState } from "preact/hooks";
import { api, ApiError } from "../api/client";
import type { User } from "../api/types";
import { t } from "../i18n";
import { errorText, useTitle } from "../ui";

function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

export function SetupPage({ onDone }: { onDone: (u: User) => void }) {
  useTitle(t.setup.title);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setError("");
    try {
      const display = String(f.get("display_name") ?? "").trim();
      const r = await api.post<{ user: User }>("/setup/initialize", {
        username: f.get("username"),
        password: f.get("password"),
        ...(display ? { display_name: display } : {}),
        timezone: browserZone(),
      });
      onDone(r.user);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="auth">
      <form class="card" onSubmit={submit}>
        <h1>{t.setup.title}</h1>
        <p class="muted">{t.setup.intro}</p>
        <label>{t.fields.username}<input name="username" autocomplete="username" required maxLength={64} /></label>
        <label>{t.fields.displayName}<input name="display_name" maxLength={100} /></label>
        <label>{t.fields.password}<input name="password" type="password" autocomplete="new-password" required minLength={8} maxLength={1024} /></label>
        {error && <p class="error" role="alert">{error}</p>}
        <button class="primary" disabled={busy}>{t.setup.submit}</button>
      </form>
    </main>
  );
}

export function LoginPage({ onDone }: { onDone: (u: User) => void }) {
  useTitle(t.login.title);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setError("");
    try {
      const r = await api.post<{ user: User }>("/auth/login", { username: f.get("username"), password: f.get("password") });
      onDone(r.user);
    } catch (e) {
      if (e instanceof ApiError && e.code === "invalid_credentials") setError(t.login.failed);
      else if (e instanceof ApiError && e.code === "rate_limited") setError(t.login.throttled(String(e.retryAfter ?? 60)));
      else setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="auth">
      <form class="card" onSubmit={submit}>
        <h1>{t.login.title}</h1>
        <label>{t.fields.username}<input name="username" autocomplete="username" required autoFocus /></label>
        <label>{t.fields.password}<input name="password" type="password" autocomplete="current-password" required /></label>
        {error && <p class="error" role="alert">{error}</p>}
        <button class="primary" disabled={busy}>{t.login.submit}</button>
      </form>
    </main>
  );
}
