// Settings for reminders: the reminder time and quiet hours (PATCH /me), the notification channels
// (create, test, enable/disable, delete), the last 100 deliveries, and, for an administrator, the
// SMTP server and the outbound rule.
import { useState } from "preact/hooks";
import type { z } from "zod";
import { api, ApiError } from "../api/client";
import type { Channel, Delivery, OutboundView, SmtpView } from "../../../src/features/reminders/channels.schemas";
import type { Me } from "../../../src/features/account/account.schemas";
import { ConfirmDialog, ErrorBox, errorText, formatInstant, toast, toastError, useLoad } from "../ui";

type ChannelView = z.output<typeof Channel>;
type DeliveryView = z.output<typeof Delivery>;
type MeView = z.output<typeof Me>;

const TYPE_NAMES: Record<ChannelView["type"], string> = { webhook: "Webhook", ntfy: "ntfy", email: "E-mail", webpush: "Push (this browser)" };

export function ReminderSettings({ isAdmin }: { isAdmin: boolean }) {
  return (
    <>
      <ReminderTimeCard />
      <ChannelsCard />
      <DeliveriesCard />
      {isAdmin && <AdminNotificationsCard />}
    </>
  );
}

function ReminderTimeCard() {
  const me = useLoad(() => api.get<MeView>("/me"), []);
  const save = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const start = String(f.get("quiet_start") ?? "");
    const end = String(f.get("quiet_end") ?? "");
    try {
      me.set(await api.patch<MeView>("/me", { reminder_time: f.get("reminder_time"), quiet_hours: f.get("quiet") === "on" ? { start, end } : null }));
      toast("Reminder settings saved");
    } catch (err) {
      toastError(err);
    }
  };
  if (me.error !== undefined) return <div class="card"><ErrorBox error={me.error} retry={me.reload} /></div>;
  if (!me.data) return null;
  const q = me.data.quiet_hours;
  return (
    <form class="card stack" onSubmit={save} aria-labelledby="rem-settings">
      <h2 id="rem-settings">Reminders</h2>
      <label>
        Reminder time for tasks due on a day (no time)
        <input name="reminder_time" type="time" required defaultValue={me.data.reminder_time} />
      </label>
      <fieldset class="row">
        <legend>Quiet hours: deliveries wait until they end</legend>
        <label class="inline"><input type="checkbox" name="quiet" defaultChecked={q !== null} /> On</label>
        <label>From<input name="quiet_start" type="time" defaultValue={q?.start ?? "22:00"} /></label>
        <label>Until<input name="quiet_end" type="time" defaultValue={q?.end ?? "07:00"} /></label>
      </fieldset>
      <div class="buttons"><button class="primary">Save</button></div>
    </form>
  );
}

function b64urlBytes(s: string): Uint8Array<ArrayBuffer> {
  const b = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4));
  const out = new Uint8Array(new ArrayBuffer(b.length));
  for (let i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
  return out;
}

/** Subscribes this browser through the web app's service worker (registered by the installable app). */
async function pushSubscription(): Promise<PushSubscriptionJSON> {
  const reg = "serviceWorker" in navigator ? await navigator.serviceWorker.getRegistration() : undefined;
  if (!reg || !("pushManager" in reg)) throw new Error("This browser cannot receive push here: install the web app (its service worker) first, over https.");
  const { key } = await api.get<{ key: string }>("/push/vapid-public-key");
  const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64urlBytes(key) });
  return sub.toJSON();
}

function ChannelsCard() {
  const channels = useLoad(() => api.get<{ items: ChannelView[] }>("/notification-channels"), []);
  const [type, setType] = useState<ChannelView["type"]>("ntfy");
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState("");
  const [confirm, setConfirm] = useState<ChannelView | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const act = async (id: string, f: () => Promise<unknown>, ok?: string) => {
    setBusy(id);
    try {
      await f();
      if (ok) toast(ok);
    } catch (e) {
      toastError(e);
    } finally {
      setBusy(null);
      channels.reload();
    }
  };
  const add = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    setError("");
    try {
      let config: Record<string, unknown>;
      if (type === "webhook") config = { url: f.get("url") };
      else if (type === "ntfy") config = { server: f.get("server"), topic: f.get("topic"), ...(f.get("token") ? { token: f.get("token") } : {}) };
      else if (type === "email") config = { address: f.get("address") };
      else config = { subscription: await pushSubscription() };
      const r = await api.post<ChannelView & { secret?: string }>("/notification-channels", { type, name: f.get("name"), config });
      form.reset();
      if (r.secret) setSecret(r.secret);
      channels.reload();
    } catch (err) {
      setError(err instanceof ApiError ? errorText(err) : (err as Error).message);
    }
  };
  return (
    <div class="card stack">
      <h2>Notification channels</h2>
      <p class="muted small">Every enabled channel receives each reminder.</p>
      {channels.error !== undefined && <ErrorBox error={channels.error} retry={channels.reload} />}
      <ul class="plain sessions">
        {(channels.data?.items ?? []).map((c) => (
          <li key={c.id}>
            <div>
              <strong>{c.name}</strong> <span class="muted">{TYPE_NAMES[c.type]}{c.enabled ? "" : " · disabled"}</span>
              <div class="muted small">{c.last_delivery ? `last: ${c.last_delivery.status}, ${formatInstant(c.last_delivery.at)}` : "no deliveries yet"}</div>
            </div>
            <div class="buttons">
              <button class="small" disabled={busy === c.id} onClick={() => act(c.id, () => api.post(`/notification-channels/${c.id}/test`), "Test sent")}>Send test</button>
              <button class="small" disabled={busy === c.id} onClick={() => act(c.id, () => api.patch(`/notification-channels/${c.id}`, { enabled: !c.enabled }))}>{c.enabled ? "Disable" : "Enable"}</button>
              <button class="small" disabled={busy === c.id} onClick={() => setConfirm(c)}>Delete</button>
            </div>
          </li>
        ))}
      </ul>
      {secret && (
        <div class="notice" role="status">
          <p>The webhook's signing secret (shown only now): each request carries <code>X-Signature: sha256=HMAC(body)</code>.</p>
          <p><code class="secret">{secret}</code></p>
          <button class="small" onClick={() => setSecret(null)}>I have copied it</button>
        </div>
      )}
      <form class="stack" onSubmit={add}>
        <h3>Add a channel</h3>
        <div class="row">
          <label>Type<select value={type} onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value as ChannelView["type"])}>{Object.entries(TYPE_NAMES).map(([k, v]) => <option key={k} value={k}>{v}</option>)}</select></label>
          <label>Name<input name="name" required maxLength={100} defaultValue={TYPE_NAMES[type]} /></label>
        </div>
        {type === "webhook" && <label>URL<input name="url" type="url" required maxLength={2000} placeholder="https://homeassistant.local/api/webhook/…" /></label>}
        {type === "ntfy" && (
          <div class="row">
            <label>Server<input name="server" type="url" required defaultValue="https://ntfy.sh" maxLength={2000} /></label>
            <label>Topic<input name="topic" required pattern="[-_A-Za-z0-9]+" maxLength={64} /></label>
            <label>Access token (optional)<input name="token" type="password" autocomplete="off" maxLength={512} /></label>
          </div>
        )}
        {type === "email" && <label>Address<input name="address" type="email" required maxLength={254} /></label>}
        {type === "webpush" && <p class="muted small">This browser will ask for permission to show notifications.</p>}
        {error && <p class="error" role="alert">{error}</p>}
        <div class="buttons"><button>Add channel</button></div>
      </form>
      {confirm && (
        <ConfirmDialog
          title="Delete channel"
          text={<p>Delete “{confirm.name}”? Reminders will no longer go there.</p>}
          yes="Delete"
          no="Cancel"
          danger
          onYes={() => {
            const c = confirm;
            setConfirm(null);
            void act(c.id, () => api.del(`/notification-channels/${c.id}`));
          }}
          onNo={() => setConfirm(null)}
        />
      )}
    </div>
  );
}

function DeliveriesCard() {
  const list = useLoad(() => api.get<{ items: DeliveryView[] }>("/deliveries", { limit: 100 }), []);
  const channels = useLoad(() => api.get<{ items: ChannelView[] }>("/notification-channels"), []);
  const name = (id: string) => channels.data?.items.find((c) => c.id === id)?.name ?? "(deleted channel)";
  return (
    <div class="card stack">
      <h2>Deliveries</h2>
      {list.error !== undefined && <ErrorBox error={list.error} retry={list.reload} />}
      {list.data && list.data.items.length === 0 && <p class="muted">No reminder has been sent yet.</p>}
      {list.data && list.data.items.length > 0 && (
        <table class="deliveries">
          <caption class="muted small">The last 100, newest first</caption>
          <thead><tr><th scope="col">Time</th><th scope="col">Channel</th><th scope="col">Status</th><th scope="col">Error</th></tr></thead>
          <tbody>
            {list.data.items.map((d) => (
              <tr key={d.id}>
                <td>{formatInstant(d.fire_at)}</td>
                <td>{name(d.channel_id)}</td>
                <td>{d.status}{d.late ? " (late)" : ""}{d.attempts > 1 ? ` · ${d.attempts} attempts` : ""}</td>
                <td>{d.last_error ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="buttons"><button class="small" onClick={list.reload}>Refresh</button></div>
    </div>
  );
}

function AdminNotificationsCard() {
  const smtp = useLoad(() => api.get<z.output<typeof SmtpView>>("/admin/smtp"), []);
  const outbound = useLoad(() => api.get<z.output<typeof OutboundView>>("/admin/outbound"), []);
  const saveSmtp = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const password = String(f.get("password") ?? "");
    try {
      smtp.set(await api.put("/admin/smtp", { host: f.get("host"), port: Number(f.get("port")), security: f.get("security"), username: String(f.get("username") ?? "") || null, ...(password ? { password } : {}), from: f.get("from") }));
      toast("SMTP settings saved");
    } catch (err) {
      toastError(err);
    }
  };
  const saveOutbound = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const mode = String(f.get("mode"));
    const allow = String(f.get("allow") ?? "").split(/[\s,]+/).filter(Boolean);
    try {
      outbound.set(await api.put("/admin/outbound", mode === "allowlist" ? { mode, allow } : { mode }));
      toast("Outbound rule saved");
    } catch (err) {
      toastError(err);
    }
  };
  const s = smtp.data;
  return (
    <>
      <form class="card stack" onSubmit={saveSmtp}>
        <h2>E-mail server (SMTP)</h2>
        {smtp.error !== undefined && <ErrorBox error={smtp.error} retry={smtp.reload} />}
        <div class="row">
          <label>Host<input name="host" required maxLength={253} defaultValue={s?.host ?? ""} /></label>
          <label>Port<input name="port" type="number" min={1} max={65535} required defaultValue={String(s?.port ?? 587)} /></label>
          <label>Security<select name="security" defaultValue={s?.security ?? "starttls"}><option value="starttls">STARTTLS</option><option value="tls">TLS</option><option value="none">None</option></select></label>
        </div>
        <div class="row">
          <label>User name<input name="username" maxLength={256} autocomplete="off" defaultValue={s?.username ?? ""} /></label>
          <label>Password<input name="password" type="password" maxLength={1024} autocomplete="new-password" placeholder={s?.password_set ? "(unchanged)" : ""} /></label>
          <label>From<input name="from" required maxLength={320} defaultValue={s?.from ?? ""} placeholder="Tasks <tasks@example.org>" /></label>
        </div>
        <div class="buttons"><button class="primary">Save</button></div>
      </form>
      <form class="card stack" onSubmit={saveOutbound}>
        <h2>Where notifications may go</h2>
        {outbound.error !== undefined && <ErrorBox error={outbound.error} retry={outbound.reload} />}
        {outbound.data && (
          <>
            <label>
              Destinations of webhooks, ntfy and push
              <select name="mode" defaultValue={outbound.data.mode}>
                <option value="any">Anywhere</option>
                <option value="public">Public addresses only</option>
                <option value="allowlist">Only the hosts listed</option>
              </select>
            </label>
            <label>Allowed hosts, addresses or ranges (allow-list)<textarea name="allow" rows={3} defaultValue={outbound.data.allow.join("\n")} /></label>
          </>
        )}
        <div class="buttons"><button class="primary">Save</button></div>
      </form>
    </>
  );
}
