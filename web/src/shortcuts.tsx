// Desktop keyboard shortcuts. Pages expose their targets with data-shortcut attributes, so this
// module needs no knowledge of their state.
import { t } from "./i18n";
import { navigate } from "./router";
import { Modal } from "./ui";

function typing(e: KeyboardEvent): boolean {
  const el = e.target as HTMLElement | null;
  return !!el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
}

const GO: Record<string, string> = { t: "/tasks", h: "/habits", c: "/countdowns", m: "/memos", s: "/settings", b: "/backup" };

export function installShortcuts(toggleHelp: () => void): () => void {
  let pendingG = 0;
  const onKey = (e: KeyboardEvent) => {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e)) return;
    if (pendingG && Date.now() - pendingG < 1500 && GO[e.key]) {
      pendingG = 0;
      e.preventDefault();
      navigate(GO[e.key]!);
      return;
    }
    pendingG = 0;
    const focus = (name: string) => {
      const el = document.querySelector<HTMLElement>(`[data-shortcut="${name}"]`);
      if (el) {
        e.preventDefault();
        el.focus();
      }
    };
    switch (e.key) {
      case "g":
        pendingG = Date.now();
        break;
      case "n":
        focus("quick-add");
        break;
      case "/":
        focus("search");
        break;
      case "?":
        e.preventDefault();
        toggleHelp();
        break;
      case "j":
      case "k": {
        const rows = [...document.querySelectorAll<HTMLElement>("[data-row]")];
        if (!rows.length) return;
        const i = rows.indexOf(document.activeElement as HTMLElement);
        const next = rows[Math.max(0, Math.min(rows.length - 1, i + (e.key === "j" ? 1 : -1)))];
        e.preventDefault();
        next?.focus();
        break;
      }
      case "x": {
        const row = (document.activeElement as HTMLElement | null)?.closest("[data-row]");
        row?.querySelector<HTMLInputElement>("input.complete")?.click();
        break;
      }
    }
  };
  window.addEventListener("keydown", onKey);
  return () => window.removeEventListener("keydown", onKey);
}

export function ShortcutHelp({ onClose }: { onClose: () => void }) {
  return (
    <Modal title={t.settings.shortcuts} onClose={onClose}>
      <table class="shortcuts">
        <tbody>
          {t.shortcuts.map(([k, d]) => (
            <tr key={k}>
              <td><kbd>{k}</kbd></td>
              <td>{d}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Modal>
  );
}
