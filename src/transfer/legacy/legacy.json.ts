/**
 * Reading a legacy JSON file record by record from its UTF-8 bytes, without the whole text or
 * its parsed tree in memory: the top-level object is walked by hand (keys, and the extent of
 * each value), and each record of the kind arrays is decoded and `JSON.parse`d on its own.
 * Every byte still passes through `JSON.parse` or the hand-walked skeleton, so a file is
 * accepted exactly when `JSON.parse` of the whole would accept it, and nothing nested deeper than
 * JSON_DEPTH_LIMIT levels (counted from the top-level object, as for every other JSON body) is
 * ever handed to `JSON.parse`: the walk that finds a value's extent counts its depth (400).
 */
import { isUtf8 } from "node:buffer";
import { JSON_DEPTH_LIMIT, jsonDeeperThan, jsonTooDeep } from "../../core/body";
import { malformed } from "../../core/errors";
import { forEachElement, JsonRecordError, skipJsonWhitespace as skipWs, valueEnd as scanValueEnd } from "../../core/streams/json-records";

export class JsonSyntaxError extends Error {}

const QUOTE = 0x22;
const decoder = new TextDecoder("utf-8");

/**
 * Index just past the value that starts at `i` (its inside is checked later by JSON.parse), by the
 * shared scanner (core/streams/json-records.ts). `outer` is the number of arrays/objects around
 * the value in the file: past JSON_DEPTH_LIMIT levels in all, the body is refused.
 */
function valueEnd(b: Uint8Array, i: number, outer: number): number {
  try {
    return scanValueEnd(b, i, JSON_DEPTH_LIMIT - outer);
  } catch (e) {
    throw syntaxOrDepth(e);
  }
}

/** The shared scanner's refusal as this reader's: too deep → 400 as for every JSON body; else a syntax error. */
function syntaxOrDepth(e: unknown): unknown {
  if (!(e instanceof JsonRecordError)) return e;
  return e.reason === "too_deep" ? jsonTooDeep() : new JsonSyntaxError(e.message);
}

/** A value's bytes, parsed (a syntax error anywhere inside throws). */
export function parseSlice(b: Uint8Array, start: number, end: number): unknown {
  try {
    return JSON.parse(decoder.decode(b.subarray(start, end)));
  } catch {
    throw new JsonSyntaxError("invalid value");
  }
}

export interface Extent {
  start: number;
  end: number;
}

/** The top-level object: every key with the extent of its value, in file order (duplicates kept). */
export type TopLevel = { key: string; value: Extent }[];

/**
 * Checks the bytes are UTF-8 and a JSON object at the top; returns its members (their values
 * unchecked), or null when the body is valid JSON but not an object. Invalid → 400.
 */
export function readTopLevel(b: Uint8Array): TopLevel | null {
  if (!isUtf8(b)) throw malformed("the body is not valid UTF-8");
  // A UTF-8 byte order mark is skipped (as the decoder of the other JSON bodies does).
  let i = b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
  try {
    i = skipWs(b, i);
    if (b[i] !== 0x7b) {
      if (jsonDeeperThan(b, JSON_DEPTH_LIMIT, i)) throw jsonTooDeep();
      parseSlice(b, i, b.length);
      return null;
    }
    const members: TopLevel = [];
    i = skipWs(b, i + 1);
    if (b[i] === 0x7d) i++;
    else {
      for (;;) {
        if (b[i] !== QUOTE) throw new JsonSyntaxError("a key is expected");
        const keyEnd = valueEnd(b, i, 1);
        const key = parseSlice(b, i, keyEnd) as string;
        i = skipWs(b, keyEnd);
        if (b[i] !== 0x3a) throw new JsonSyntaxError("a colon is expected");
        i = skipWs(b, i + 1);
        const start = i;
        i = valueEnd(b, i, 1);
        members.push({ key, value: { start, end: i } });
        i = skipWs(b, i);
        if (b[i] === 0x2c) {
          i = skipWs(b, i + 1);
          continue;
        }
        if (b[i] === 0x7d) {
          i++;
          break;
        }
        throw new JsonSyntaxError("a comma or a closing brace is expected");
      }
    }
    if (skipWs(b, i) !== b.length) throw new JsonSyntaxError("text after the value");
    return members;
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw malformed("the body is not valid JSON");
    throw e;
  }
}

/**
 * The elements of the array whose extent is given, each as the extent of its bytes (cut by the
 * shared splitter, core/streams/json-records.ts). Elements are not parsed here.
 */
export function eachArrayElement(b: Uint8Array, value: Extent, fn: (e: Extent) => void): void {
  try {
    // The elements of a top-level member's array: inside the top-level object and the array.
    forEachElement(b, value.start, value.end, JSON_DEPTH_LIMIT - 2, (start, end) => fn({ start, end }));
  } catch (e) {
    throw syntaxOrDepth(e);
  }
}

/** eachArrayElement, as a list. */
export function arrayElements(b: Uint8Array, value: Extent): Extent[] {
  const out: Extent[] = [];
  eachArrayElement(b, value, (e) => out.push(e));
  return out;
}

export const isArrayValue = (b: Uint8Array, value: Extent) => b[value.start] === 0x5b;
