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

export class JsonSyntaxError extends Error {}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const decoder = new TextDecoder("utf-8");

const isWs = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipWs(b: Uint8Array, i: number): number {
  while (i < b.length && isWs(b[i])) i++;
  return i;
}

/** Index just past the string that starts at `i` (an opening quote). */
function stringEnd(b: Uint8Array, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = b.indexOf(QUOTE, j);
    if (q < 0) throw new JsonSyntaxError("unterminated string");
    let k = q - 1;
    while (b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/**
 * Index just past the value that starts at `i` (its inside is checked later by JSON.parse).
 * `outer` is the number of arrays/objects around the value in the file: past JSON_DEPTH_LIMIT
 * levels in all, the body is refused.
 */
function valueEnd(b: Uint8Array, i: number, outer: number): number {
  const c = b[i];
  if (c === QUOTE) return stringEnd(b, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    let j = i;
    while (j < b.length) {
      const d = b[j]!;
      if (d === QUOTE) {
        j = stringEnd(b, j);
        continue;
      }
      if (d === 0x7b || d === 0x5b) {
        if (++depth + outer > JSON_DEPTH_LIMIT) throw jsonTooDeep();
      } else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    throw new JsonSyntaxError("unterminated value");
  }
  let j = i;
  while (j < b.length) {
    const d = b[j];
    if (d === 0x2c || d === 0x7d || d === 0x5d || isWs(d)) break;
    j++;
  }
  if (j === i) throw new JsonSyntaxError("a value is missing");
  return j;
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
        const keyEnd = stringEnd(b, i);
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
 * The elements of the array whose extent is given, each as the extent of its bytes, or null when
 * the value is not an array. Elements are not parsed here.
 */
export function* arrayElements(b: Uint8Array, value: Extent): Generator<Extent> {
  let i = skipWs(b, value.start + 1);
  if (b[i] === 0x5d) {
    i++;
  } else {
    for (;;) {
      const start = i;
      // The elements of a top-level member's array: inside the top-level object and the array.
      i = valueEnd(b, i, 2);
      yield { start, end: i };
      i = skipWs(b, i);
      if (b[i] === 0x2c) {
        i = skipWs(b, i + 1);
        continue;
      }
      if (b[i] === 0x5d) {
        i++;
        break;
      }
      throw new JsonSyntaxError("a comma or a closing bracket is expected");
    }
  }
  if (i !== value.end) throw new JsonSyntaxError("text after the array");
}

export const isArrayValue = (b: Uint8Array, value: Extent) => b[value.start] === 0x5b;
