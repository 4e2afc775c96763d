import type { TestApp, TestClient } from "../helpers/app";

export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

/** An open GET /events stream read as it arrives, through the app's real fetch handler. */
export class SseStream {
  private buf = "";
  readonly events: SseEvent[] = [];
  done = false;
  private waiters: (() => void)[] = [];

  constructor(
    readonly status: number,
    private readonly reader: ReadableStreamDefaultReader<Uint8Array> | null,
    readonly headers: Headers,
  ) {
    if (reader) void this.pump();
    else this.done = true;
  }

  private async pump(): Promise<void> {
    const dec = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await this.reader!.read();
        if (done) break;
        this.buf += dec.decode(value, { stream: true });
        let i: number;
        while ((i = this.buf.indexOf("\n\n")) >= 0) {
          const block = this.buf.slice(0, i);
          this.buf = this.buf.slice(i + 2);
          const ev: SseEvent = { id: null, event: "message", data: "" };
          let any = false;
          for (const line of block.split("\n")) {
            if (line.startsWith(":") || line.startsWith("retry:")) continue;
            const [k, ...rest] = line.split(": ");
            const v = rest.join(": ");
            if (k === "id") ev.id = v;
            else if (k === "event") ev.event = v;
            else if (k === "data") ev.data = v;
            any = true;
          }
          if (any) this.events.push(ev);
        }
        this.wake();
      }
    } catch {
      // cancelled
    }
    this.done = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Waits (up to `ms`) until `pred` holds for the events so far (or the stream ended). */
  async until(pred: (evs: SseEvent[]) => boolean, ms = 5000): Promise<SseEvent[]> {
    const end = Date.now() + ms;
    while (!pred(this.events) && !this.done && Date.now() < end) {
      await new Promise<void>((res) => {
        this.waiters.push(res);
        setTimeout(res, 50);
      });
    }
    return this.events;
  }

  /** Waits a little and returns what arrived (to prove that nothing did). */
  async settle(ms = 150): Promise<SseEvent[]> {
    await new Promise((r) => setTimeout(r, ms));
    return this.events;
  }

  close(): void {
    void this.reader?.cancel().catch(() => {});
  }
}

export async function openEvents(app: TestApp, c: TestClient, lastEventId?: string): Promise<SseStream> {
  const headers: Record<string, string> = { cookie: [...c.jar].map(([k, v]) => `${k}=${v}`).join("; ") };
  if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
  const res = await app.handle.fetch(new Request("http://localhost/api/v1/events", { headers }), { requestIP: () => ({ address: "127.0.0.1" }) });
  if (res.status !== 200) {
    await res.arrayBuffer();
    return new SseStream(res.status, null, res.headers);
  }
  return new SseStream(res.status, res.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>, res.headers);
}

export const typed = (evs: SseEvent[]): Record<string, unknown>[] => evs.map((e) => ({ type: e.event, ...(e.data ? (JSON.parse(e.data) as Record<string, unknown>) : {}) }));
