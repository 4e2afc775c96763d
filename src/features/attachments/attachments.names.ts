/**
 * A client's file name is shown and offered back on download, never used as a path (files are
 * stored under their attachment id). It is still cleaned so that what is shown is what it is.
 */

export const MAX_FILENAME = 255;

// Bidirectional controls (U+202E makes "gpj.exe" read as "exe.jpg") and other invisible format marks.
const BIDI_AND_FORMAT = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
// C0/C1 controls: NUL, CR, LF and friends.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** The name as stored: last path segment, NFC, no controls or bidi marks, at most 255 characters. */
export function cleanFilename(raw: string | null): string {
  let s = (raw ?? "").normalize("NFC").replace(CONTROLS, "").replace(BIDI_AND_FORMAT, "");
  // `../../x`, `..\x`, `/etc/passwd` and `C:\x` keep only their last segment.
  s = s.split(/[\\/]/).pop() ?? "";
  s = s.trim();
  if (s === "" || s === "." || s === "..") return "file";
  const chars = Array.from(s);
  if (chars.length <= MAX_FILENAME) return s;
  // Over-long: cut the stem, keep a short extension.
  const dot = s.lastIndexOf(".");
  const ext = dot > 0 && s.length - dot <= 16 ? Array.from(s.slice(dot)) : [];
  return chars.slice(0, MAX_FILENAME - ext.length).join("").trimEnd() + ext.join("");
}

/** RFC 8187 value-chars: what may stay unescaped in `filename*=UTF-8''…`. */
const ATTR_CHAR = /[A-Za-z0-9!#$&+\-.^_`|~]/;

/**
 * `attachment; filename*=UTF-8''…` for any name: every byte outside attr-char is percent-encoded,
 * so quotes, CR/LF, `;` and non-ASCII can never break the header.
 */
export function contentDisposition(filename: string): string {
  let out = "";
  for (const b of new TextEncoder().encode(filename)) {
    const c = String.fromCharCode(b);
    out += b < 0x80 && ATTR_CHAR.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return `attachment; filename*=UTF-8''${out}`;
}
