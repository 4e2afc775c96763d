// The first page's side of sharing (issue 19): the share dialog and the invitations page load on
// demand from ./sharing.tsx (its own chunk: the first page's JavaScript budget), and the pending
// invitations' count the sidebar shows.
import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client";
import { t } from "../i18n";
import { onLive } from "../live";
import type { ShareDialogProps } from "./sharing";

type SharingModule = typeof import("./sharing");
let loading: Promise<SharingModule> | null = null;
function loadSharing(): Promise<SharingModule> {
  loading ??= import("./sharing").catch((e) => {
    loading = null; // a lost connection: the next attempt loads again
    throw e;
  });
  return loading;
}

function useSharingModule(): { mod: SharingModule | null; failed: boolean; retry: () => void } {
  const [mod, setMod] = useState<SharingModule | null>(null);
  const [failed, setFailed] = useState(false);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let live = true;
    loadSharing().then(
      (m) => live && setMod(() => m),
      () => live && setFailed(true),
    );
    return () => void (live = false);
  }, [attempt]);
  return {
    mod,
    failed,
    retry: () => {
      setFailed(false);
      setAttempt((n) => n + 1);
    },
  };
}

function LoadFailed({ retry }: { retry: () => void }) {
  return (
    <div class="error-box" role="alert">
      {t.sharing.loadFailed} <button onClick={retry}>{t.retry}</button>
    </div>
  );
}

export function LazyInvitationsPage() {
  const s = useSharingModule();
  if (s.failed) return <LoadFailed retry={s.retry} />;
  if (!s.mod) return <p class="muted">{t.loading}</p>;
  return <s.mod.InvitationsPage />;
}

export function LazyShareDialog(p: ShareDialogProps) {
  const s = useSharingModule();
  if (s.failed) return <LoadFailed retry={s.retry} />;
  if (!s.mod) return null;
  return <s.mod.ShareDialog {...p} />;
}

/** Fired (on window) when the user accepts or declines an invitation: the count re-reads. */
export const INVITATIONS_EVENT = "app:invitations";

/**
 * How many invitations wait for the user. An invitation sends no event to the invitee (they cannot
 * see the list yet), so the count is read when the page opens, when the tab comes back into view,
 * on any membership change or resync, and after an accept or decline.
 */
export function useInvitationCount(): number {
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    const read = () =>
      api.get<{ items: unknown[] }>("/invitations").then(
        (r) => live && setN(r.items.length),
        () => undefined, // the count is a hint: an error here is shown by the page itself
      );
    void read();
    const onVisible = () => document.visibilityState === "visible" && void read();
    const off = onLive((e) => (e.type === "membership.changed" || e.type === "resync") && void read());
    window.addEventListener(INVITATIONS_EVENT, read);
    window.addEventListener("focus", read);
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      live = false;
      off();
      window.removeEventListener(INVITATIONS_EVENT, read);
      window.removeEventListener("focus", read);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, []);
  return n;
}
