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

/** One line per request and per notable event, to stdout. Never a cookie, token or password. */
export class Logger {
  constructor(
    private readonly format: LogFormat,
    private readonly write: (line: string) => void = (l) => process.stdout.write(l + "\n"),
  ) {}

  get enabled(): boolean {
    return this.format !== "off";
  }

  request(r: RequestLogLine): void {
    if (this.format === "off") return;
    if (this.format === "json") {
      this.write(JSON.stringify({ time: new Date().toISOString(), level: "info", msg: "request", ...r }));
    } else {
      this.write(
        `${new Date().toISOString()} INFO ${r.method} ${r.path} ${r.status} ${r.duration_ms}ms req=${r.request_id} user=${r.user_id ?? "-"} ip=${r.ip ?? "-"}`,
      );
    }
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

  private event(level: string, msg: string, fields: Record<string, unknown>): void {
    if (this.format === "off" && level !== "error") return;
    if (this.format === "json") {
      this.write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }));
    } else {
      const extra = Object.entries(fields)
        .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
        .join(" ");
      this.write(`${new Date().toISOString()} ${level.toUpperCase()} ${msg}${extra ? " " + extra : ""}`);
    }
  }
}
