import { writeSync } from "node:fs";

export type LogFormat = "text" | "json" | "off";

export interface RequestLogLine {
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  request_id: string;
  user_id: string | null;
  ip: string | null;
}

/** A request line as recorded on the request path: formatted only when the buffer is flushed. */
interface PendingRequest extends RequestLogLine {
  at: number;
}

/** Where finished text goes: `write` takes whole lines joined by "\n" (with a final "\n"). */
export interface LogSink {
  write(chunk: string, final: boolean): void;
}

/**
 * Standard output through write(2) on fd 1, not `process.stdout.write`: Bun queues a pipe write
 * and `process.exit` drops what is queued (measured: 64 KiB of 10 MB arrived through a pipe), so
 * lines written just before a shutdown were lost. A full non-blocking pipe (EAGAIN) keeps the rest
 * for the next flush instead of stalling the event loop; only the final flush waits for it (at
 * most FINAL_FLUSH_WAIT_MS). A closed reader (EPIPE) drops the text: logging never takes the server down.
 */
export class StdoutSink implements LogSink {
  private carry: Buffer | null = null;

  write(chunk: string, final: boolean): void {
    let buf = chunk ? Buffer.from(chunk) : Buffer.alloc(0);
    if (this.carry) {
      buf = Buffer.concat([this.carry, buf]);
      this.carry = null;
    }
    let off = 0;
    const deadline = final ? performance.now() + FINAL_FLUSH_WAIT_MS : 0;
    while (off < buf.length) {
      try {
        off += writeSync(1, buf, off);
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (code === "EAGAIN" || code === "EWOULDBLOCK") {
          if (final && performance.now() < deadline) {
            Bun.sleepSync(1);
            continue;
          }
          // Bounded: a reader that stopped reading does not make the server hold its logs forever.
          this.carry = buf.length - off <= MAX_CARRY_BYTES ? buf.subarray(off) : null;
          return;
        }
        return; // EPIPE, EBADF: nobody is reading.
      }
    }
  }
}

/** Shutdown waits this long at most for a slow reader of standard output. */
const FINAL_FLUSH_WAIT_MS = 5000;
/** Request lines are written at least this often (journald and `tail -f` see them within a second). */
export const LOG_FLUSH_MS = 1000;
/** ...and as soon as this many are waiting, so the buffer stays small under load. */
const FLUSH_LINES = 512;
const MAX_CARRY_BYTES = 4 * 1024 * 1024;

/**
 * One line per request and per notable event, to stdout. Never a cookie, token or password.
 *
 * Request lines are the hot path (one per request; writing each with its own system call cost
 * 10-19% of a task page's throughput): they are kept as records, then formatted and written
 * together once a second or every FLUSH_LINES lines, after the response has gone out. Events
 * (start, stop, errors) are rare and written at once, after any request lines before them, so
 * the order of the log is the order things happened. `close()` writes what is left (shutdown).
 */
export class Logger {
  private pending: PendingRequest[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private flushQueued = false;
  private readonly sink: LogSink;

  /** `write` (tests) receives each line; without it lines go to standard output. */
  constructor(
    private readonly format: LogFormat,
    write?: (line: string) => void,
  ) {
    this.sink = write
      ? {
          write: (chunk) => {
            for (const line of chunk.split("\n")) if (line) write(line);
          },
        }
      : new StdoutSink();
  }

  get enabled(): boolean {
    return this.format !== "off";
  }

  request(r: RequestLogLine): void {
    if (this.format === "off") return;
    (r as PendingRequest).at = Date.now();
    this.pending.push(r as PendingRequest);
    if (this.pending.length >= FLUSH_LINES) {
      // After this response is written, not during it.
      if (!this.flushQueued) {
        this.flushQueued = true;
        setImmediate(() => this.flush());
      }
    } else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), LOG_FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Writes the waiting request lines now. */
  flush(final = false): void {
    this.flushQueued = false;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.pending.length === 0) {
      if (final) this.sink.write("", true);
      return;
    }
    const batch = this.pending;
    this.pending = [];
    let out = "";
    for (const r of batch) out += this.formatRequest(r) + "\n";
    this.sink.write(out, final);
  }

  /** Shutdown: everything waiting is written before the process exits. */
  close(): void {
    this.flush(true);
  }

  info(msg: string, fields: Record<string, unknown> = {}): void {
    this.event("info", msg, fields);
  }

  warn(msg: string, fields: Record<string, unknown> = {}): void {
    this.event("warn", msg, fields);
  }

  error(msg: string, fields: Record<string, unknown> = {}): void {
    this.event("error", msg, fields);
  }

  private formatRequest(r: PendingRequest): string {
    const time = new Date(r.at).toISOString();
    if (this.format === "json") {
      return JSON.stringify({
        time,
        level: "info",
        msg: "request",
        method: r.method,
        path: r.path,
        status: r.status,
        duration_ms: r.duration_ms,
        request_id: r.request_id,
        user_id: r.user_id,
        ip: r.ip,
      });
    }
    return `${time} INFO ${r.method} ${r.path} ${r.status} ${r.duration_ms}ms req=${r.request_id} user=${r.user_id ?? "-"} ip=${r.ip ?? "-"}`;
  }

  private event(level: string, msg: string, fields: Record<string, unknown>): void {
    if (this.format === "off" && level !== "error") return;
    let line: string;
    if (this.format === "json") {
      line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields });
    } else {
      const extra = Object.entries(fields)
        .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
        .join(" ");
      line = `${new Date().toISOString()} ${level.toUpperCase()} ${msg}${extra ? " " + extra : ""}`;
    }
    // Request lines recorded before this event go first.
    this.flush();
    this.sink.write(line + "\n", false);
  }
}
