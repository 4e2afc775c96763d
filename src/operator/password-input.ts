import { ConfigError } from "../config";

/** Reading a password on the command line (reset-password, users create): a terminal without echo, else one line of standard input. */

/** The longest line `reset-password` reads (a password is at most 1024 characters, 4 bytes each). */
const PASSWORD_LINE_MAX_BYTES = 4096 + 2;

/** The first line of standard input (a pipe or a file), without its line ending; nothing after it is read. */
export async function readPasswordLine(): Promise<string> {
  const reader = Bun.stdin.stream().getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let complete = false;
  try {
    while (!complete) {
      const { done, value } = await reader.read();
      if (done) break;
      const nl = value.indexOf(0x0a);
      chunks.push(nl === -1 ? value : value.subarray(0, nl));
      size += nl === -1 ? value.length : nl;
      complete = nl !== -1;
      if (size > PASSWORD_LINE_MAX_BYTES) throw new ConfigError("the first line of standard input is too long for a password");
    }
  } finally {
    void reader.cancel().catch(() => {});
  }
  const line = new TextDecoder().decode(Buffer.concat(chunks)).replace(/\r$/, "");
  if (line === "") throw new ConfigError("no password on standard input (one line: the new password); nothing changed");
  return line;
}

/**
 * Asks for the password twice on the terminal, without echo: raw mode, so every key arrives as typed
 * and nothing is shown. Enter ends a line; Backspace and Ctrl-U edit it; Ctrl-C or Ctrl-D cancel.
 * The prompts go to standard error, so standard output stays the result line.
 */
export async function promptPassword(): Promise<string> {
  const stdin = process.stdin;
  const dec = new TextDecoder();
  let pending = "";
  let ended = false;
  let wake: (() => void) | null = null;
  const onData = (chunk: Buffer) => {
    pending += dec.decode(chunk, { stream: true });
    wake?.();
  };
  const onEnd = () => {
    ended = true;
    wake?.();
  };
  const readLine = async (prompt: string): Promise<string> => {
    process.stderr.write(prompt);
    let line = "";
    for (;;) {
      while (pending === "") {
        if (ended) throw new ConfigError("cancelled; nothing changed");
        await new Promise<void>((r) => (wake = r));
        wake = null;
      }
      // An escape sequence (arrow keys, function keys) is dropped whole.
      const esc = /^\x1b(?:\[[0-9;?]*[@-~]|O.)?/.exec(pending);
      if (esc) {
        pending = pending.slice(esc[0].length);
        continue;
      }
      const ch = String.fromCodePoint(pending.codePointAt(0)!);
      pending = pending.slice(ch.length);
      if (ch === "\r" || ch === "\n") {
        if (ch === "\r" && pending.startsWith("\n")) pending = pending.slice(1);
        process.stderr.write("\n");
        return line;
      }
      if (ch === "\u0003" || (ch === "\u0004" && line === "")) {
        process.stderr.write("\n");
        throw new ConfigError("cancelled; nothing changed");
      }
      if (ch === "\u007f" || ch === "\b") line = Array.from(line).slice(0, -1).join("");
      else if (ch === "\u0015") line = "";
      else if (ch >= " ") line += ch;
    }
  };
  stdin.setRawMode(true);
  stdin.on("data", onData);
  stdin.on("end", onEnd);
  stdin.resume();
  try {
    const first = await readLine("New password: ");
    if (first === "") throw new ConfigError("no password given; nothing changed");
    const second = await readLine("Repeat: ");
    if (first !== second) throw new ConfigError("the two passwords differ; nothing changed");
    return first;
  } finally {
    stdin.setRawMode(false);
    stdin.off("data", onData);
    stdin.off("end", onEnd);
    stdin.pause();
  }
}

