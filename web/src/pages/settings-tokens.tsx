// Settings → Devices & apps (issue 16, devices.md "Tokens"): the user's API tokens / app passwords
// (name, scopes, created, expiry, last use with its address), creating one (its secret is shown
// once, with a copy button), revoking one (after a confirmation), and what a phone needs for CalDAV:
// the URL, the username and a QR code of the URL. The QR encoder (uqr) is loaded on demand, in a
// chunk of its own, so the first page's script does not grow.
import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client";
import type { User } from "../api/types";
import { t } from "../i18n";
import { ConfirmDialog, ErrorBox, errorText, formatInstant, toast, toastError, todayLocal, useLoad } from "../ui";
import { QrCode } from "./qr-code";

type Scope = "read" | "write" | "caldav";
const SCOPES: Scope[] = ["read", "write", "caldav"];

interface ApiToken {
  id: string;
  name: string;
  scopes: Scope[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  last_used_ip: string | null;
}
type CreatedToken = ApiToken & { secret: string };

/** The end of a chosen local day (an expiry date means "valid through that day"). */
function endOfLocalDay(date: string): string {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  return new Date(y, m - 1, d, 23, 59, 59, 999).toISOString();
}

export function TokensCard({ user }: { user: User }) {
  const tokens = useLoad(() => api.get<{ items: ApiToken[] }>("/tokens"), []);
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [revoking, setRevoking] = useState<ApiToken | null>(null);
  const [error, setError] = useState("");
  const davUrl = `${location.origin}/dav/`;

  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    const scopes = SCOPES.filter((s) => f.get(`scope_${s}`) === "on");
    const expiry = String(f.get("expires") ?? "");
    setError("");
    if (scopes.length === 0) {
      setError(t.tokens.pickScope);
      return;
    }
    try {
      const token = await api.post<CreatedToken>("/tokens", { name: String(f.get("name") ?? ""), scopes, ...(expiry ? { expires_at: endOfLocalDay(expiry) } : {}) });
      form.reset();
      setCreated(token);
      tokens.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const revoke = async (token: ApiToken) => {
    setRevoking(null);
    try {
      await api.del(`/tokens/${token.id}`);
      toast(t.tokens.revoked(token.name));
      if (created?.id === token.id) setCreated(null);
    } catch (err) {
      toastError(err);
    }
    tokens.reload();
  };
  const copy = async (text: string) => {
    try {
      await navigator.clipboard.writeText(text);
      toast(t.tokens.copied);
    } catch {
      // No clipboard (plain http, or refused): the field is selected for copying by hand.
      const field = document.getElementById("token-secret") as HTMLInputElement | null;
      field?.select();
      toast(t.tokens.copyByHand);
    }
  };

  return (
    <section class="card stack" aria-labelledby="tokens-title">
      <h2 id="tokens-title">{t.tokens.title}</h2>
      <p class="muted">{t.tokens.intro}</p>

      <h3>{t.tokens.caldavTitle}</h3>
      <p class="muted">{t.tokens.caldavHelp}</p>
      <div class="row caldav-setup">
        <dl class="stack">
          <div>
            <dt class="muted small">{t.tokens.caldavUrl}</dt>
            <dd><code data-testid="caldav-url">{davUrl}</code></dd>
          </div>
          <div>
            <dt class="muted small">{t.fields.username}</dt>
            <dd><code>{user.username}</code></dd>
          </div>
          <div>
            <dt class="muted small">{t.fields.password}</dt>
            <dd>{t.tokens.caldavPassword}</dd>
          </div>
        </dl>
        <QrCode text={davUrl} label={t.tokens.qrLabel(davUrl)} />
      </div>

      {created && (
        <div class="stack token-secret" role="status">
          <strong>{t.tokens.createdTitle(created.name)}</strong>
          <p>{t.tokens.shownOnce}</p>
          <div class="row">
            <label>
              {t.tokens.secret}
              <input id="token-secret" readOnly value={created.secret} size={50} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
            </label>
            <button type="button" onClick={() => copy(created.secret)}>{t.tokens.copy}</button>
            <button type="button" onClick={() => setCreated(null)}>{t.done}</button>
          </div>
        </div>
      )}

      {tokens.error !== undefined && <ErrorBox error={tokens.error} retry={tokens.reload} />}
      {tokens.data && tokens.data.items.length === 0 && <p class="muted">{t.tokens.none}</p>}
      <ul class="plain sessions" aria-label={t.tokens.listLabel}>
        {(tokens.data?.items ?? []).map((tk) => {
          const expired = tk.expires_at !== null && Date.parse(tk.expires_at) <= Date.now();
          return (
            <li key={tk.id} data-token={tk.name}>
              <div>
                <strong>{tk.name}</strong> <span class="muted small">{tk.scopes.map((s) => t.tokens.scopes[s]).join(", ")}</span>
                <div class="muted small">
                  {t.tokens.created(formatInstant(tk.created_at))}
                  {" · "}
                  {tk.expires_at ? (expired ? t.tokens.expired(formatInstant(tk.expires_at)) : t.tokens.expires(formatInstant(tk.expires_at))) : t.tokens.noExpiry}
                  {" · "}
                  {tk.last_used_at ? t.tokens.lastUsed(formatInstant(tk.last_used_at), tk.last_used_ip ?? "") : t.tokens.neverUsed}
                </div>
              </div>
              <button class="small" type="button" onClick={() => setRevoking(tk)} aria-label={t.tokens.revokeNamed(tk.name)}>{t.tokens.revoke}</button>
            </li>
          );
        })}
      </ul>

      <form class="stack" onSubmit={create}>
        <h3>{t.tokens.newTitle}</h3>
        <div class="row">
          <label>{t.tokens.name}<input name="name" required maxLength={100} autocomplete="off" placeholder={t.tokens.namePlaceholder} /></label>
          <label>{t.tokens.expiry}<input name="expires" type="date" min={todayLocal()} /></label>
        </div>
        <fieldset class="row">
          <legend>{t.tokens.scopesLegend}</legend>
          {SCOPES.map((s) => (
            <label key={s} class="inline"><input type="checkbox" name={`scope_${s}`} defaultChecked={s === "caldav"} /> {t.tokens.scopes[s]}</label>
          ))}
        </fieldset>
        <p class="muted small">{t.tokens.scopesHelp}</p>
        {error && <p class="error" role="alert">{error}</p>}
        <div class="buttons"><button class="primary">{t.tokens.create}</button></div>
      </form>

      {revoking && (
        <ConfirmDialog
          title={t.tokens.revokeTitle}
          text={t.tokens.revokeText(revoking.name)}
          yes={t.tokens.revoke}
          no={t.cancel}
          danger
          onYes={() => revoke(revoking)}
          onNo={() => setRevoking(null)}
        />
      )}
    </section>
  );
}
