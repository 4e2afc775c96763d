import type { z } from "zod";

/**
 * Characters of `s` as JSON Schema's maxLength counts them (RFC 8259 characters: code points), so
 * an emoji or a CJK extension character is one, where `s.length` (UTF-16 units) counts it twice.
 * A lone surrogate counts as one, as `[...s].length` does; nothing is allocated.
 */
export function charCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/**
 * `schema` limited to `max` characters counted as code points, with `maxLength: max` in the OpenAPI
 * document, which counts them so. The one way a text limit is written: zod's own `.max()` counts
 * UTF-16 units and refused 101 emoji under a documented limit of 200. The default message is the
 * one `.max()` gave, so answers to plain text over a limit read as they always did.
 */
export function maxChars<S extends z.ZodType<string, string>>(schema: S, max: number, message = `Too big: expected string to have <=${max} characters`): S {
  // A string no longer than `max` in UTF-16 units is no longer in code points: no count (the common case).
  return schema.refine((s) => s.length <= max || charCount(s) <= max, message).meta({ maxLength: max });
}
