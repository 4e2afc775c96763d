// Settings → Calendar feeds (issue 16): secret webcal URLs a calendar app subscribes to.
import { useState } from "preact/hooks";
import type { Feed } from "../../../src/features/feeds/feeds.schemas";
import { api } from "../api/client";
import type { List } from "../api/types";
import { t } from "../i18n";
import { ConfirmDialog, ErrorBox, formatInstant, toast, toastError, useLoad } from "../ui";
import { QrCode } from "./qr-code";

type Include = Feed["include"][number];
const INCLUDES: Include[] = ["tasks", "countdowns", "habits"];

export function FeedsCard() {
  const feeds = useLoad(() => api.get<{ items: Feed[] }>("/feeds"), []);
  const lists = useLoad(() => api.get<{ items: List[] }>("/lists"), []);
  const [scope, setScope] = useState<"all" | "list">("all");
  const [include, setInclude] = useState<Include[]>(["tasks", "countdowns"]);
  const [revoking, setRevoking] = useState<Feed | null>(null);
  // The feed whose QR code (its webcal link, for a phone's camera) is shown.
  const [qrFor, setQrFor] = useState<string | null>(null);
  const listName = (id: string | null) => (id === null ? "" : (lists.data?.items.find((l) => l.id === id)?.name ?? null));

  const create = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    try {
      await api.post<Feed>("/feeds", {
        scope,
        ...(scope === "list" ? { list_id: String(f.get("list_id")) } : {}),
        include,
        task_format: String(f.get("task_format")),
      });
      toast(t.feeds.created);
      feeds.reload();
    } catch (err) {
      toastError(err);
    }
  };
  const copy = async (url: string) => {
    try {
      await navigator.clipboard.writeText(url);
      toast(t.feeds.copied);
    } catch {
      // No clipboard (plain http on another host): the field is selected for a manual copy.
      toast(t.feeds.copyManually);
    }
  };
  const revoke = async (feed: Feed) => {
    setRevoking(null);
    try {
      await api.del(`/feeds/${feed.id}`);
      toast(t.feeds.revoked);
    } catch (err) {
      toastError(err);
    }
    feeds.reload();
  };
  const toggle = (i: Include, on: boolean) => setInclude((cur) => INCLUDES.filter((x) => (x === i ? on : cur.includes(x))));

  return (
    <div class="card stack feeds">
      <h2>{t.feeds.title}</h2>
      <p class="muted">{t.feeds.intro}</p>
      {feeds.error !== undefined && <ErrorBox error={feeds.error} retry={feeds.reload} />}
      {feeds.data && feeds.data.items.length === 0 && <p class="muted">{t.feeds.none}</p>}
      <ul class="plain feed-list">
        {(feeds.data?.items ?? []).map((f) => {
          const name = listName(f.list_id);
          return (
            <li key={f.id} class="stack">
              <div>
                <strong>{f.scope === "all" ? t.feeds.everything : name === null ? t.feeds.listUnavailable : name}</strong>
                <span class="muted small"> · {f.include.map((i) => t.feeds.includes[i]).join(", ")} · {t.feeds.formats[f.task_format]} · {formatInstant(f.created_at)}</span>
              </div>
              <div class="row">
                <input class="feed-url" readOnly value={f.url} aria-label={t.feeds.url} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
                <button type="button" class="small" onClick={() => copy(f.url)}>{t.feeds.copy}</button>
                <a class="button small" href={f.webcal_url}>{t.feeds.subscribe}</a>
                <button type="button" class="small" aria-expanded={qrFor === f.id} onClick={() => setQrFor(qrFor === f.id ? null : f.id)}>{t.feeds.qr}</button>
                <button type="button" class="small danger" onClick={() => setRevoking(f)}>{t.feeds.revoke}</button>
              </div>
              {qrFor === f.id && <QrCode text={f.webcal_url} label={t.feeds.qrLabel} />}
            </li>
          );
        })}
      </ul>
      <form class="stack" onSubmit={create}>
        <h3>{t.feeds.new}</h3>
        <fieldset>
          <legend>{t.feeds.scope}</legend>
          <label class="inline"><input type="radio" name="scope" value="all" checked={scope === "all"} onChange={() => setScope("all")} /> {t.feeds.everything}</label>
          <label class="inline"><input type="radio" name="scope" value="list" checked={scope === "list"} onChange={() => setScope("list")} /> {t.feeds.oneList}</label>
        </fieldset>
        {scope === "list" && (
          <label>{t.feeds.list}
            <select name="list_id" required>{(lists.data?.items ?? []).map((l) => <option key={l.id} value={l.id}>{l.name}</option>)}</select>
          </label>
        )}
        <fieldset>
          <legend>{t.feeds.include}</legend>
          {INCLUDES.map((i) => (
            <label key={i} class="inline"><input type="checkbox" name="include" value={i} checked={include.includes(i)} onChange={(e) => toggle(i, (e.currentTarget as HTMLInputElement).checked)} /> {t.feeds.includes[i]}</label>
          ))}
        </fieldset>
        <label>{t.feeds.format}
          <select name="task_format" defaultValue="events">
            <option value="events">{t.feeds.formats.events}</option>
            <option value="todos">{t.feeds.formats.todos}</option>
          </select>
        </label>
        <div class="buttons"><button class="primary" disabled={include.length === 0}>{t.feeds.create}</button></div>
      </form>
      {revoking && (
        <ConfirmDialog title={t.feeds.revokeTitle} text={t.feeds.revokeText} yes={t.feeds.revoke} no={t.cancel} danger onYes={() => revoke(revoking)} onNo={() => setRevoking(null)} />
      )}
    </div>
  );
}
