// The service worker's side of reminders (Web Push): show a reminder's notification with the
// actions "Done" and "Snooze 10 min", and act on a tap. The installable web app's service worker
// (web/src/sw/sw.ts, another part of the app) calls installPushHandlers(self) once.
//
// The payload is the server's webhook body (RFC 8291-encrypted by the server, decrypted by the
// browser): { event, id, reminder_id, fire_at, late, target: { type, id, title, due_at?, list? },
// actions: { done, snooze } | null }. The action URLs carry their own signed token: they are
// POSTed without cookies (no session needed, nothing else can be done with them).

/** What the server sends (the webhook body of reminders.md). */
export interface ReminderPush {
  event: "reminder" | "test" | "alert";
  id: string;
  reminder_id: string | null;
  fire_at: string;
  late: boolean;
  /** "instance": an administrator's alert about the server itself (a failed backup). */
  target: { type: "task" | "habit" | "countdown" | "instance"; id: string; title: string; due_at?: string | null; list?: { id: string; name: string } };
  actions: { done: string; snooze: string } | null;
}

// The few service-worker types used here, declared locally: the web app is type-checked against
// the DOM library, which does not describe a ServiceWorkerGlobalScope.
interface ExtendableEvent extends Event {
  waitUntil(p: Promise<unknown>): void;
}
interface PushEvent extends ExtendableEvent {
  data: { json(): unknown; text(): string } | null;
}
interface NotificationEvent extends ExtendableEvent {
  action: string;
  notification: Notification & { data: unknown };
}
interface WindowClientLike {
  url: string;
  focus(): Promise<unknown>;
  navigate?(url: string): Promise<unknown>;
}
export interface PushWorkerScope {
  registration: { showNotification(title: string, options: NotificationOptions & { actions?: { action: string; title: string }[]; timestamp?: number }): Promise<void> };
  clients: { matchAll(o: { type: "window"; includeUncontrolled: boolean }): Promise<WindowClientLike[]>; openWindow(url: string): Promise<unknown> };
  location: { origin: string };
  addEventListener(type: "push", f: (e: PushEvent) => void): void;
  addEventListener(type: "notificationclick", f: (e: NotificationEvent) => void): void;
}

/** Where a tap on the notification itself leads: the target in the web app. */
export function targetPath(p: ReminderPush): string {
  switch (p.target.type) {
    case "task":
      return "/tasks";
    case "habit":
      return "/habits";
    case "countdown":
      return "/countdowns";
    case "instance":
      return "/settings";
  }
}

/** The notification a payload shows (pure: what the tests check). */
export function notificationOf(p: ReminderPush): { title: string; options: NotificationOptions & { actions: { action: string; title: string }[] } } {
  const when = p.target.due_at ? `Due ${new Date(p.target.due_at.length === 10 ? `${p.target.due_at}T00:00:00` : p.target.due_at).toLocaleString()}` : "";
  const body = [when, p.target.list?.name, p.late ? "(late)" : ""].filter(Boolean).join(" · ");
  return {
    title: p.event === "test" ? "Test notification" : p.target.title,
    options: {
      body: p.event === "test" ? "Push notifications work on this device." : p.event === "alert" ? "Server alert: open Settings for details." : body,
      tag: p.id,
      data: p,
      actions: p.actions ? [{ action: "done", title: "Done" }, { action: "snooze", title: "Snooze 10 min" }] : [],
    },
  };
}

export function installPushHandlers(sw: PushWorkerScope): void {
  sw.addEventListener("push", (event) => {
    let p: ReminderPush;
    try {
      p = event.data?.json() as ReminderPush;
    } catch {
      return;
    }
    if (!p || typeof p !== "object" || !p.target) return;
    const n = notificationOf(p);
    event.waitUntil(sw.registration.showNotification(n.title, n.options));
  });

  sw.addEventListener("notificationclick", (event) => {
    const p = event.notification.data as ReminderPush | null;
    event.notification.close();
    if (!p) return;
    if ((event.action === "done" || event.action === "snooze") && p.actions) {
      // The signed link is the credential; cookies are not sent (the server ignores a session there).
      event.waitUntil(fetch(p.actions[event.action], { method: "POST", credentials: "omit" }).then(() => undefined, () => undefined));
      return;
    }
    const url = new URL(targetPath(p), sw.location.origin).href;
    event.waitUntil(
      sw.clients.matchAll({ type: "window", includeUncontrolled: true }).then((list) => {
        const open = list.find((c) => c.url.startsWith(sw.location.origin));
        if (open) return open.navigate ? open.navigate(url).then(() => open.focus()) : open.focus();
        return sw.clients.openWindow(url);
      }),
    );
  });
}
