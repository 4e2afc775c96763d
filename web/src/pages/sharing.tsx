// Sharing a list (issue 19, sharing.md), loaded on demand (./sharing-lazy.tsx): the share dialog
// (owner: invite by exact username with a role, pending invitations, members' roles, removal,
// ownership transfer; a member: who is on the list, and leaving it) and the invitations page
// (accept or decline). Every call is the API's own (src/features/sharing/sharing.routes.ts).
import { useEffect, useState } from "preact/hooks";
import { api, ApiError } from "../api/client";
import type { InboxInvitation, List, ListInvitation, Member, Person, User } from "../api/types";
import { t } from "../i18n";
import { onLive } from "../live";
import { navigate } from "../router";
import { ConfirmDialog, ErrorBox, errorText, formatInstant, Modal, toast, toastError, useLoad, useTitle } from "../ui";

type Role = Member["role"];
const INVITATIONS_EVENT = "app:invitations"; // ./sharing-lazy.tsx INVITATIONS_EVENT (not imported: no cycle between the chunks)

/** "Bob Smith (bob)", or "bob" when the display name says nothing more. */
export const personName = (p: Pick<Person, "username" | "display_name">) => (p.display_name && p.display_name !== p.username ? `${p.display_name} (${p.username})` : p.username);

export interface ShareDialogProps {
  list: List;
  me: User;
  onClose: () => void;
  /** Members or roles changed: the lists (role, member_count) are read again. */
  onChanged: () => void;
  /** The user left the list (or is no longer its member). */
  onLeft: () => void;
}

type Ask = { kind: "remove" | "transfer"; member: Member } | { kind: "leave" };

export function ShareDialog(p: ShareDialogProps) {
  const owner = p.list.role === "owner";
  const members = useLoad(() => api.get<{ items: Member[] }>(`/lists/${p.list.id}/members`), [p.list.id]);
  const invitations = useLoad(() => (owner ? api.get<{ items: ListInvitation[] }>(`/lists/${p.list.id}/invitations`) : Promise.resolve({ items: [] as ListInvitation[] })), [p.list.id, owner]);
  const [ask, setAsk] = useState<Ask | null>(null);
  const [busy, setBusy] = useState(false);
  // Another member's change (a role, someone leaving) shows while the dialog is open.
  useEffect(
    () =>
      onLive((e) => {
        if ((e.type === "membership.changed" && e.list_id === p.list.id) || e.type === "resync") {
          members.reload();
          invitations.reload();
        }
      }),
    [p.list.id, members.reload, invitations.reload],
  );

  const act = async (f: () => Promise<unknown>, done: string) => {
    setBusy(true);
    try {
      await f();
      toast(done);
    } catch (e) {
      toastError(e);
    } finally {
      setBusy(false);
      members.reload();
      invitations.reload();
      p.onChanged();
    }
  };
  const setRole = (m: Member, role: Role) => act(() => api.patch(`/lists/${p.list.id}/members/${m.user.id}`, { role }), t.sharing.roleChanged(personName(m.user), t.sharing.roles[role]));
  const withdraw = (inv: ListInvitation) => act(() => api.del(`/invitations/${inv.id}`), t.sharing.invitationCancelled);
  const confirmAsk = async () => {
    const a = ask!;
    setAsk(null);
    if (a.kind === "remove") await act(() => api.del(`/lists/${p.list.id}/members/${a.member.user.id}`), t.sharing.removed(personName(a.member.user)));
    else if (a.kind === "transfer") await act(() => api.patch(`/lists/${p.list.id}/members/${a.member.user.id}`, { role: "owner" }), t.sharing.transferred(personName(a.member.user)));
    else {
      try {
        await api.del(`/lists/${p.list.id}/members/${p.me.id}`);
        toast(t.sharing.left(p.list.name));
        p.onLeft();
      } catch (e) {
        toastError(e);
      }
    }
  };

  const title = owner ? t.sharing.shareTitle(p.list.name) : t.sharing.membersTitle(p.list.name);
  const items = members.data?.items ?? [];
  return (
    <Modal title={title} onClose={p.onClose} class="share-dialog">
      <div class="stack" aria-busy={busy}>
        {owner && <InviteForm list={p.list} onInvited={() => { invitations.reload(); }} />}
        <section class="share-members" aria-labelledby="share-members-heading">
          <h3 id="share-members-heading">{t.sharing.members}</h3>
          {members.error !== undefined && <ErrorBox error={members.error} retry={members.reload} />}
          <ul class="people">
            {items.map((m) => {
              const name = personName(m.user);
              const self = m.user.id === p.me.id;
              return (
                <li key={m.user.id} class="person" data-user={m.user.username}>
                  <span class="person-name" dir="auto">
                    {name}
                    {self && <span class="muted"> ({t.sharing.you})</span>}
                  </span>
                  {owner && m.role !== "owner" ? (
                    <span class="person-actions">
                      <select aria-label={t.sharing.roleOf(name)} value={m.role} disabled={busy} onChange={(e) => void setRole(m, (e.currentTarget as HTMLSelectElement).value as Role)}>
                        <option value="editor">{t.sharing.roles.editor}</option>
                        <option value="viewer">{t.sharing.roles.viewer}</option>
                      </select>
                      {m.role === "editor" && (
                        <button type="button" class="small" disabled={busy} onClick={() => setAsk({ kind: "transfer", member: m })}>
                          {t.sharing.makeOwner(name)}
                        </button>
                      )}
                      <button type="button" class="small danger" disabled={busy} onClick={() => setAsk({ kind: "remove", member: m })}>
                        {t.sharing.remove(name)}
                      </button>
                    </span>
                  ) : (
                    <span class="role-label">{t.sharing.roles[m.role]}</span>
                  )}
                </li>
              );
            })}
          </ul>
        </section>
        {owner && (
          <section class="share-pending" aria-labelledby="share-pending-heading">
            <h3 id="share-pending-heading">{t.sharing.pending}</h3>
            {invitations.error !== undefined && <ErrorBox error={invitations.error} retry={invitations.reload} />}
            {invitations.data && invitations.data.items.length === 0 && <p class="muted">{t.sharing.noPending}</p>}
            <ul class="people">
              {(invitations.data?.items ?? []).map((inv) => (
                <li key={inv.id} class="person" data-user={inv.invitee.username}>
                  <span class="person-name" dir="auto">
                    {personName(inv.invitee)} <span class="muted">· {t.sharing.roles[inv.role]} · {t.sharing.expires(formatInstant(inv.expires_at))}</span>
                  </span>
                  <button type="button" class="small" disabled={busy} onClick={() => void withdraw(inv)}>
                    {t.sharing.cancelInvitation(personName(inv.invitee))}
                  </button>
                </li>
              ))}
            </ul>
          </section>
        )}
        {!owner && (
          <div class="buttons">
            <span class="spacer" />
            <button type="button" class="danger" onClick={() => setAsk({ kind: "leave" })}>{t.sharing.leave}</button>
          </div>
        )}
      </div>
      {ask && (
        <ConfirmDialog
          title={ask.kind === "remove" ? t.sharing.removeTitle : ask.kind === "transfer" ? t.sharing.transferTitle : t.sharing.leaveTitle}
          text={<p>{ask.kind === "remove" ? t.sharing.removeText(personName(ask.member.user), p.list.name) : ask.kind === "transfer" ? t.sharing.transferText(personName(ask.member.user), p.list.name) : t.sharing.leaveText(p.list.name)}</p>}
          yes={ask.kind === "remove" ? t.sharing.removeTitle : ask.kind === "transfer" ? t.sharing.transferTitle : t.sharing.leave}
          no={t.cancel}
          danger={ask.kind !== "transfer"}
          onYes={() => void confirmAsk()}
          onNo={() => setAsk(null)}
        />
      )}
    </Modal>
  );
}

/** Look up the exact username first (a clear "no such user"), then send the invitation. */
function InviteForm({ list, onInvited }: { list: List; onInvited: () => void }) {
  const [username, setUsername] = useState("");
  const [role, setRole] = useState<"editor" | "viewer">("editor");
  const [status, setStatus] = useState<{ text: string; ok: boolean } | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const name = username.trim();
    if (!name) return;
    setBusy(true);
    setStatus(null);
    try {
      let person: Person;
      try {
        person = await api.get<Person>("/users/lookup", { username: name });
      } catch (err) {
        if (err instanceof ApiError && err.code === "not_found") {
          setStatus({ text: t.sharing.noSuchUser(name), ok: false });
          return;
        }
        throw err;
      }
      await api.post(`/lists/${list.id}/invitations`, { username: person.username, role });
      setStatus({ text: t.sharing.invited(personName(person)), ok: true });
      setUsername("");
      onInvited();
    } catch (err) {
      setStatus({ text: errorText(err), ok: false });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="invite-form stack" onSubmit={submit} aria-labelledby="invite-heading">
      <h3 id="invite-heading">{t.sharing.inviteHeading}</h3>
      <div class="row">
        <label>
          {t.fields.username}
          <input name="username" value={username} required maxLength={100} autoComplete="off" autoCapitalize="none" spellcheck={false} aria-describedby="invite-hint" onInput={(e) => setUsername((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label>
          {t.sharing.role}
          <select name="role" value={role} onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value as "editor" | "viewer")}>
            <option value="editor">{t.sharing.roles.editor}</option>
            <option value="viewer">{t.sharing.roles.viewer}</option>
          </select>
        </label>
        <button class="primary" disabled={busy}>{t.sharing.invite}</button>
      </div>
      <p class="muted" id="invite-hint">{t.sharing.inviteHint}</p>
      <p role="status" class={status && !status.ok ? "warning" : "muted"}>{status?.text ?? ""}</p>
    </form>
  );
}

/** Invitations to the user: accept (the list joins their lists) or decline. */
export function InvitationsPage() {
  useTitle(t.sharing.invitations);
  const inbox = useLoad(() => api.get<{ items: InboxInvitation[] }>("/invitations"), []);
  // An invitation sent or withdrawn while the page is open appears or goes at once.
  useEffect(() => onLive((e) => (e.type === "membership.changed" || e.type === "resync") && inbox.reload()), [inbox.reload]);
  const [busy, setBusy] = useState<string | null>(null);
  const answer = async (inv: InboxInvitation, accept: boolean) => {
    setBusy(inv.id);
    try {
      if (accept) {
        const list = await api.post<List>(`/invitations/${inv.id}/accept`);
        toast(t.sharing.accepted(list.name));
        window.dispatchEvent(new Event(INVITATIONS_EVENT));
        navigate(`/tasks?list=${list.id}`);
        return;
      }
      await api.post(`/invitations/${inv.id}/decline`);
      toast(t.sharing.declined);
      window.dispatchEvent(new Event(INVITATIONS_EVENT));
    } catch (e) {
      toastError(e);
    } finally {
      setBusy(null);
    }
    inbox.reload();
  };
  const items = inbox.data?.items ?? [];
  return (
    <div class="invitations-page">
      <header class="page-header">
        <h1>{t.sharing.invitations}</h1>
      </header>
      {inbox.error !== undefined && <ErrorBox error={inbox.error} retry={inbox.reload} />}
      {inbox.loading && !inbox.data && <p class="muted">{t.loading}</p>}
      {inbox.data && items.length === 0 && <p class="empty">{t.sharing.noInvitations}</p>}
      <ul class="invitations">
        {items.map((inv) => (
          <li key={inv.id} class="invitation">
            <div class="invitation-text">
              <strong dir="auto">
                <span class="dot" style={inv.list.color ? { background: inv.list.color } : undefined} aria-hidden="true" /> {inv.list.name}
              </strong>
              <span class="muted" dir="auto">{t.sharing.invitationFrom(personName(inv.from), t.sharing.roles[inv.role])}</span>
              <span class="muted">{t.sharing.expires(formatInstant(inv.expires_at))}</span>
            </div>
            <span class="invitation-actions">
              <button class="primary" disabled={busy !== null} aria-label={t.sharing.acceptList(inv.list.name)} onClick={() => void answer(inv, true)}>{t.sharing.accept}</button>
              <button disabled={busy !== null} aria-label={t.sharing.declineList(inv.list.name)} onClick={() => void answer(inv, false)}>{t.sharing.decline}</button>
            </span>
          </li>
        ))}
      </ul>
      <p><a href="/tasks">{t.nav.tasks}</a></p>
    </div>
  );
}
