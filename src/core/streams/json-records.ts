/**
 * The one JSON record splitter: a JSON array cut into its elements (the records) from its UTF-8
 * bytes, fed in chunks of any size or all at once, without the whole text or its parsed tree in
 * memory. Used by the backup reader (each data entry of an archive is one array, inflated in
 * slices) and the legacy restore (each kind's array of an in-memory body).
 *
 * Every byte still passes through `JSON.parse` (each element's) or this scanner (the brackets,
 * commas and whitespace between elements), so an array is accepted exactly when `JSON.parse` of
 * the whole would accept it. Strictness kept from both readers it replaces: nesting past
 * `maxDepth` is refused while scanning, linearly, before any `JSON.parse` sees it; an element past
 * `maxRecordChars` is refused as soon as its bytes pass what that many characters can take, not
 * after it was gathered whole; strings are skipped with the native `indexOf` (a memo's text, or a
 * junk key of a million characters, costs no loop in JavaScript).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

const isJsonWhitespace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Why an array was refused; `index` is the element's (null: the array's own syntax). */
export class JsonRecordError extends Error {
  constructor(
    readonly reason: "syntax" | "too_deep" | "too_large" | "not_utf8",
    message: string,
    readonly index: number | null,
  ) {
    super(message);
  }
}

/** Progress through one value (an element, or a value a caller skips over), kept across chunks. */
class ValueScan {
  private depth = 0;
  private inString = false;
  /** Inside a string: the bytes before the current chunk ended in an odd run of backslashes. */
  private escaped = false;
  private started = false;
  private scalar = false;

  constructor(
    /** Arrays/objects allowed inside the value, its own bracket counting as one. */
    private readonly maxDepth: number,
  ) {}

  /**
   * Scans `b` from `i` (to `end`) through the value that starts at or continues from `i`. Returns
   * the index just past the value, or -1 when `end` came first (feed the next bytes). Only the
   * value's outline is checked here (strings closed, brackets counted); JSON.parse checks the rest.
   */
  scan(b: Uint8Array, i: number, end: number): number {
    if (!this.started) {
      this.started = true;
      const c = b[i];
      if (c === QUOTE) {
        this.inString = true;
        i++;
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (++this.depth > this.maxDepth) throw new JsonRecordError("too_deep", `nested deeper than ${this.maxDepth} levels`, null);
        i++;
      } else this.scalar = true;
      // A string at the top is the whole value.
      if (this.inString && this.depth === 0) return this.stringRest(b, i, end);
    }
    if (this.scalar) {
      while (i < end) {
        const d = b[i];
        if (d === COMMA || d === CLOSE_OBJECT || d === CLOSE_ARRAY || isJsonWhitespace(d)) return i;
        i++;
      }
      return -1;
    }
    if (this.inString && this.depth === 0) return this.stringRest(b, i, end);
    while (i < end) {
      if (this.inString) {
        const j = this.stringRest(b, i, end);
        if (j < 0) return -1;
        i = j;
        continue;
      }
      const d = b[i]!;
      if (d === QUOTE) {
        this.inString = true;
        i++;
      } else if (d === OPEN_OBJECT || d === OPEN_ARRAY) {
        if (++this.depth > this.maxDepth) throw new JsonRecordError("too_deep", `nested deeper than ${this.maxDepth} levels`, null);
        i++;
      } else if (d === CLOSE_OBJECT || d === CLOSE_ARRAY) {
        i++;
        if (--this.depth === 0) return i;
      } else i++;
    }
    return -1;
  }

  /** Inside a string: the index just past its closing quote (or -1: not in these bytes). */
  private stringRest(b: Uint8Array, i: number, end: number): number {
    let from = i;
    for (;;) {
      const q = b.indexOf(QUOTE, from);
      if (q < 0 || q >= end) {
        // The string goes on: remember whether its bytes so far end in an escape.
        let k = end - 1;
        while (k >= i && b[k] === BACKSLASH) k--;
        const run = end - 1 - k;
        this.escaped = k < i ? this.escaped !== (run % 2 === 1) : run % 2 === 1;
        return -1;
      }
      let k = q - 1;
      while (k >= i && b[k] === BACKSLASH) k--;
      const run = q - 1 - k;
      // A run of backslashes reaching back to the chunk's start continues the one carried over.
      const odd = k < i ? this.escaped !== (run % 2 === 1) : run % 2 === 1;
      if (!odd) {
        this.inString = false;
        this.escaped = false;
        return q + 1;
      }
      from = q + 1;
      // Past an escaped quote the run before it no longer matters.
      i = q + 1;
      this.escaped = false;
    }
  }
}

/** Index just past the whole value at `i` in `b` (`maxDepth` as ValueScan), or a syntax error. */
export function valueEnd(b: Uint8Array, i: number, maxDepth: number): number {
  const end = new ValueScan(maxDepth).scan(b, i, b.length);
  if (end < 0) throw new JsonRecordError("syntax", "unterminated value", null);
  if (end === i) throw new JsonRecordError("syntax", "a value is missing", null);
  return end;
}

export function skipJsonWhitespace(b: Uint8Array, i: number, end = b.length): number {
  while (i < end && isJsonWhitespace(b[i])) i++;
  return i;
}

export interface JsonRecordOptions {
  /** Nesting allowed inside an element, its own bracket counting as one. */
  maxDepth: number;
  /** Characters allowed in an element's text (Infinity: no limit of its own). */
  maxRecordChars: number;
}

/**
 * Cuts the bytes of one JSON array into its elements: each is handed to `onElement` with its
 * extent in the stream (byte offsets from the first byte pushed) as soon as its last byte is seen.
 * `text()` decodes the element (valid only during the call). Elements spanning chunks are gathered
 * (copied: a caller may reuse its chunk buffer); the others are views of their chunk.
 */
export class JsonRecordSplitter {
  private state: "start" | "first" | "value" | "after" | "next" | "done" = "start";
  private scan: ValueScan | null = null;
  private index = 0;
  /** Stream offset of the first byte of the current chunk. */
  private offset = 0;
  /** The current element's start (stream offset), and its bytes from earlier chunks. */
  private elementStart = 0;
  private carried: Uint8Array[] = [];
  private carriedBytes = 0;
  private readonly decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  private current: Uint8Array | null = null;
  private currentText: string | null = null;

  constructor(
    private readonly options: JsonRecordOptions,
    private readonly onElement: (index: number, start: number, end: number, text: () => string) => void,
  ) {}

  /** The element being handed to onElement, as text (decoded once; not UTF-8 → error). */
  private readonly text = (): string => {
    if (this.currentText === null) {
      try {
        this.currentText = this.decoder.decode(this.current!);
      } catch {
        throw new JsonRecordError("not_utf8", "not UTF-8", this.index);
      }
      if (this.currentText.length > this.options.maxRecordChars) throw new JsonRecordError("too_large", "record too large", this.index);
    }
    return this.currentText;
  };

  push(chunk: Uint8Array): void {
    const n = chunk.byteLength;
    let i = 0;
    while (i < n) {
      switch (this.state) {
        case "start": {
          i = skipJsonWhitespace(chunk, i, n);
          if (i === n) break;
          if (chunk[i] !== OPEN_ARRAY) {
            const bom = chunk[i] === 0xef && this.offset + i === 0;
            throw new JsonRecordError("syntax", bom ? "a byte order mark before the JSON array" : "not a JSON array", null);
          }
          i++;
          this.state = "first";
          break;
        }
        case "first":
        case "next": {
          i = skipJsonWhitespace(chunk, i, n);
          if (i === n) break;
          const c = chunk[i];
          if (c === CLOSE_ARRAY && this.state === "first") {
            i++;
            this.state = "done";
            break;
          }
          if (c === COMMA || c === CLOSE_ARRAY) throw new JsonRecordError("syntax", "invalid JSON array", null);
          this.elementStart = this.offset + i;
          this.scan = new ValueScan(this.options.maxDepth);
          this.state = "value";
          break;
        }
        case "value": {
          let end: number;
          try {
            end = this.scan!.scan(chunk, i, n);
          } catch (e) {
            if (e instanceof JsonRecordError) throw new JsonRecordError(e.reason, e.message, this.index);
            throw e;
          }
          const from = this.carriedBytes === 0 ? this.elementStart - this.offset : 0;
          if (end < 0) {
            // A copy (a Buffer's slice() would be a view of a chunk the caller may reuse).
            const part = new Uint8Array(n - from);
            part.set(chunk.subarray(from));
            this.carried.push(part);
            this.carriedBytes += n - from;
            // No text of maxRecordChars characters takes more than 3 bytes per character.
            if (this.carriedBytes > 3 * this.options.maxRecordChars) throw new JsonRecordError("too_large", "record too large", this.index);
            i = n;
            break;
          }
          this.finish(chunk.subarray(from, end), this.offset + end);
          i = end;
          this.state = "after";
          break;
        }
        case "after": {
          i = skipJsonWhitespace(chunk, i, n);
          if (i === n) break;
          const c = chunk[i];
          if (c === COMMA) this.state = "next";
          else if (c === CLOSE_ARRAY) this.state = "done";
          else throw new JsonRecordError("syntax", "invalid JSON", this.index - 1);
          i++;
          break;
        }
        case "done":
          i = skipJsonWhitespace(chunk, i, n);
          if (i < n) throw new JsonRecordError("syntax", "unexpected data after the JSON array", null);
          break;
      }
    }
    this.offset += n;
  }

  private finish(tail: Uint8Array, end: number): void {
    let bytes = tail;
    if (this.carriedBytes > 0) {
      bytes = new Uint8Array(this.carriedBytes + tail.byteLength);
      let at = 0;
      for (const p of this.carried) {
        bytes.set(p, at);
        at += p.byteLength;
      }
      bytes.set(tail, at);
      this.carried = [];
      this.carriedBytes = 0;
    }
    if (bytes.byteLength > 3 * this.options.maxRecordChars) throw new JsonRecordError("too_large", "record too large", this.index);
    this.current = bytes;
    this.currentText = null;
    try {
      this.onElement(this.index, this.elementStart, end, this.text);
    } finally {
      this.current = null;
      this.currentText = null;
    }
    this.index++;
    this.scan = null;
  }

  /** The stream ended: the array must be closed. */
  end(): void {
    if (this.state !== "done") throw new JsonRecordError("syntax", "the JSON array is not closed", null);
  }
}

/**
 * Every element of an array held whole (`b[start..end)`), by extent; `maxDepth` as in
 * JsonRecordOptions. Text after the array's closing bracket (before `end`) is a syntax error.
 */
export function forEachElement(b: Uint8Array, start: number, end: number, maxDepth: number, fn: (start: number, end: number) => void): void {
  const s = new JsonRecordSplitter({ maxDepth, maxRecordChars: Infinity }, (_i, from, to) => fn(start + from, start + to));
  s.push(b.subarray(start, end));
  s.end();
}
