import { useEffect, useState } from "preact/hooks";
import { api, onUnauthenticated } from "./api/client";
import type { User } from "./api/types";
import { t } from "./i18n";
import { match, navigate, useLocation } from "./router";
import { installShortcuts, ShortcutHelp } from "./shortcuts";
import { ErrorBox, formatInstant, Toasts, useTitle } from "./ui";
import { useOfflineCopy } from "./offline";
import { LoginPage, SetupPage } from "./pages/auth";
import { TasksPage } from "./pages/tasks";
import { TrashPage } from "./pages/trash";
import { HabitsPage } from "./pages/habits";
import { CountdownsPage } from "./pages/countdowns";
import { MemosPage } from "./pages/memos";
import { SettingsPage } from "./pages/settings";
import { BackupPage } from "./pages/backup";
import { ImportPage } from "./pages/import";
import { LazyInvitationsPage } from "./pages/sharing-lazy";
import { startLive } from "./live";

/** Says when the lists on screen are the saved copy (the server cannot be reached). */
function OfflineBanner() {
  const at = useOfflineCopy();
  if (at === null) return null;
  const when = at === "unknown" ? "" : formatInstant(at);
  return (
    <div class="offline-banner" role="status">
      {t.offlineCopy(when)}
    </div>
  );
}

function NotFound() {
  useTitle(t.nav.notFound);
  return (
    <div class="empty">
      <h1>{t.nav.notFound}</h1>
      <a href="/tasks">{t.nav.tasks}</a>
    </div>
  );
}

type Boot = { state: "loading" } | { state: "setup" } | { state: "login" } | { state: "ready"; user: User } | { state: "error"; error: unknown };

const NAV: [string, string, string][] = [
  ["/tasks", t.nav.tasks, "☑"],
  ["/habits", t.nav.habits, "◎"],
  ["/countdowns", t.nav.countdowns, "◷"],
  ["/memos", t.nav.memos, "✎"],
  ["/settings", t.nav.settings, "⚙"],
  ["/backup", t.nav.backup, "⇩"],
  ["/import", t.nav.import, "⇪"],
];

export function App() {
  const [boot, setBoot] = useState<Boot>({ state: "loading" });
  const [help, setHelp] = useState(false);
  const loc = useLocation();

  const start = async () => {
    setBoot({ state: "loading" });
    try {
      const s = await api.get<{ initialized: boolean }>("/setup/status");
      if (!s.initialized) return setBoot({ state: "setup" });
      try {
        setBoot({ state: "ready", user: await api.get<User>("/me") });
      } catch {
        setBoot({ state: "login" });
      }
    } catch (error) {
      setBoot({ state: "error", error });
    }
  };
  useEffect(() => {
    void start();
    return onUnauthenticated(() => setBoot((b) => (b.state === "ready" ? { state: "login" } : b)));
  }, []);
  useEffect(() => installShortcuts(() => setHelp((h) => !h)), []);
  // One event stream per tab while signed in (./live.ts): shared lists change without a reload.
  const signedInAs = boot.state === "ready" ? boot.user.id : null;
  useEffect(() => (signedInAs ? startLive() : undefined), [signedInAs]);

  if (boot.state === "loading") return <main class="boot"><h1 class="sr-only">{t.appName}</h1>{t.loading}</main>;
  if (boot.state === "error") {
    return (
      <main class="boot">
        <div>
          <h1>{t.appName}</h1>
          <ErrorBox error={boot.error} retry={start} />
        </div>
      </main>
    );
  }
  const signedIn = (user: User) => {
    setBoot({ state: "ready", user });
    if (loc.path === "/" || loc.path === "/login" || loc.path === "/setup") navigate("/tasks", { replace: true });
  };
  if (boot.state === "setup") return <SetupPage onDone={signedIn} />;
  if (boot.state === "login") return <LoginPage onDone={signedIn} />;

  const user = boot.user;
  const trimmed = loc.path.replace(/\/+$/, "");
  const path = trimmed === "" ? "/tasks" : trimmed;
  let page;
  if (path === "/tasks") page = <TasksPage query={loc.query} user={user} />;
  else if (path === "/trash") page = <TrashPage />;
  else if (path === "/invitations") page = <LazyInvitationsPage />;
  else if (path === "/habits") page = <HabitsPage />;
  else if (path === "/countdowns") page = <CountdownsPage />;
  else if (path === "/memos" || match("/memos/:id", path)) page = <MemosPage />;
  else if (path === "/settings") page = <SettingsPage user={user} onUser={(u) => setBoot({ state: "ready", user: u })} onSignedOut={() => setBoot({ state: "login" })} />;
  else if (path === "/backup") page = <BackupPage />;
  else if (path === "/import") page = <ImportPage />;
  else page = <NotFound />;

  return (
    <div class="shell">
      <nav class="topnav" aria-label="Main">
        <a class="brand" href="/tasks">{t.appName}</a>
        {NAV.map(([href, label, icon]) => (
          <a key={href} href={href} class={path.startsWith(href) || (href === "/tasks" && (path === "/trash" || path === "/invitations")) ? "active" : ""} aria-current={path.startsWith(href) ? "page" : undefined}>
            <span class="nav-icon" aria-hidden="true">{icon}</span>
            <span class="nav-label">{label}</span>
          </a>
        ))}
        <span class="spacer" />
        <span class="user muted">{user.display_name}</span>
      </nav>
      <OfflineBanner />
      <main class="page">{page}</main>
      {help && <ShortcutHelp onClose={() => setHelp(false)} />}
      <Toasts />
    </div>
  );
}
