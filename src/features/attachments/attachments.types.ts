/**
 * The allow-list of attachment types, decided from the file's first bytes (its "magic"), never
 * from the declared type alone: the declared type or the file name only chooses between types
 * that share a container (a .docx and a .zip are both ZIP files). SVG and HTML are never
 * allowed (they can carry script), and text that looks like either is refused whatever it is
 * declared as.
 */

/** How many leading bytes are looked at before a type is decided. */
export const SNIFF_BYTES = 4096;

const OOXML: Record<string, string> = {
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  odt: "application/vnd.oasis.opendocument.text",
  ods: "application/vnd.oasis.opendocument.spreadsheet",
  odp: "application/vnd.oasis.opendocument.presentation",
};
const OLE: Record<string, string> = {
  doc: "application/msword",
  xls: "application/vnd.ms-excel",
  ppt: "application/vnd.ms-powerpoint",
};
const TEXT: Record<string, string> = {
  txt: "text/plain",
  md: "text/markdown",
  markdown: "text/markdown",
  csv: "text/csv",
};

export type TypeDecision =
  | { ok: true; contentType: string; text: boolean }
  | { ok: false; reason: string };

function startsWith(b: Uint8Array, sig: number[], at = 0): boolean {
  if (b.byteLength < at + sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[at + i] !== sig[i]) return false;
  return true;
}
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));

function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf(".");
  return dot > 0 ? filename.slice(dot + 1).toLowerCase() : "";
}

function mediaType(declared: string | null): string {
  return (declared ?? "").split(";")[0]!.trim().toLowerCase();
}

/** Picks the member of a family the client named (declared type first, then extension). */
function pick(family: Record<string, string>, declared: string, ext: string): string | undefined {
  const values = Object.values(family);
  if (values.includes(declared)) return declared;
  return family[ext];
}

// Markup that a browser would render as a document: HTML, SVG, XML (which can hold either).
const MARKUP_START = /^(?:\ufeff)?[\s]*<(?:!doctype\s+html|html|head|body|script|iframe|svg|\?xml|!--|[a-z][a-z0-9-]*:svg|object|embed|style|img|a\s|div|meta|link|title|table|form)/i;
const MARKUP_ANYWHERE = /<\s*(?:svg|script|html|iframe|!doctype\s+html)\b/i;

/** Whether the leading text looks like HTML, SVG or XML markup. */
export function looksLikeMarkup(text: string): boolean {
  return MARKUP_START.test(text) || MARKUP_ANYWHERE.test(text);
}

// C0 controls other than tab, LF, FF and CR (and DEL): a text file does not contain them.
const CONTROL = /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/;

/** Whether a decoded chunk of text contains control characters a text file never has. */
export function hasBinaryControls(text: string): boolean {
  return CONTROL.test(text);
}

/**
 * Decides the stored Content-Type from the first bytes (`head`, up to SNIFF_BYTES; shorter only
 * when the file is), the declared type and the file name.
 */
export function decideType(head: Uint8Array, declaredType: string | null, filename: string): TypeDecision {
  const declared = mediaType(declaredType);
  const ext = extensionOf(filename);
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { ok: true, contentType: "image/png", text: false };
  if (startsWith(head, [0xff, 0xd8, 0xff])) return { ok: true, contentType: "image/jpeg", text: false };
  if (startsWith(head, ascii("GIF87a")) || startsWith(head, ascii("GIF89a"))) return { ok: true, contentType: "image/gif", text: false };
  if (startsWith(head, ascii("RIFF")) && startsWith(head, ascii("WEBP"), 8)) return { ok: true, contentType: "image/webp", text: false };
  if (startsWith(head, ascii("%PDF-"))) return { ok: true, contentType: "application/pdf", text: false };
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04]) || startsWith(head, [0x50, 0x4b, 0x05, 0x06])) {
    return { ok: true, contentType: pick(OOXML, declared, ext) ?? "application/zip", text: false };
  }
  if (startsWith(head, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) {
    const t = pick(OLE, declared, ext);
    return t ? { ok: true, contentType: t, text: false } : { ok: false, reason: "an OLE compound file that is not a Word, Excel or PowerPoint document" };
  }
  // Anything else must be UTF-8 text that is not markup.
  let text: string;
  try {
    // The head may end inside a multi-byte character: stream mode tolerates an unfinished tail.
    text = new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: true });
  } catch {
    return { ok: false, reason: "the file's content is not an allowed type (images, PDF, text, ZIP, office documents)" };
  }
  if (hasBinaryControls(text)) return { ok: false, reason: "the file's content is not an allowed type (images, PDF, text, ZIP, office documents)" };
  if (looksLikeMarkup(text)) return { ok: false, reason: "HTML, SVG and XML files are not allowed (they can carry script)" };
  const t = pick(TEXT, declared, ext) ?? "text/plain";
  return { ok: true, contentType: `${t}; charset=utf-8`, text: true };
}

/**
 * The allow-list applied to a stream of bytes, as the upload and the backup restore both apply it:
 * the type is decided on the first SNIFF_BYTES (`decideType`), and a text type stays valid UTF-8
 * without binary controls to the last byte. `refuse` makes the caller's error from the reason
 * (415 for an upload, a backup_invalid problem for a restore). Chunks may be reused by the caller
 * after `push`: what is kept of them is copied.
 */
export class ContentTypeCheck {
  private head: Uint8Array[] = [];
  private headBytes = 0;
  private decision: Extract<TypeDecision, { ok: true }> | null = null;
  private readonly utf8 = new TextDecoder("utf-8", { fatal: true });

  constructor(
    private readonly declaredType: string | null,
    private readonly filename: string,
    private readonly refuse: (reason: string) => Error,
  ) {}

  push(chunk: Uint8Array): void {
    if (this.decision) {
      this.checkText(chunk);
      return;
    }
    this.head.push(new Uint8Array(chunk));
    this.headBytes += chunk.byteLength;
    if (this.headBytes >= SNIFF_BYTES) this.decide();
  }

  /** The accepted type, once every byte was pushed. */
  end(): Extract<TypeDecision, { ok: true }> {
    const d = this.decision ?? this.decide();
    if (d.text) {
      try {
        this.utf8.decode();
      } catch {
        throw this.refuse("the file is neither valid UTF-8 text nor another allowed type");
      }
    }
    return d;
  }

  private decide(): Extract<TypeDecision, { ok: true }> {
    const head = this.head.length === 1 ? this.head[0]! : new Uint8Array(Buffer.concat(this.head));
    const d = decideType(head, this.declaredType, this.filename);
    if (!d.ok) throw this.refuse(d.reason);
    this.decision = d;
    this.head = [];
    this.checkText(head);
    return d;
  }

  private checkText(chunk: Uint8Array): void {
    if (!this.decision!.text) return;
    let text: string;
    try {
      text = this.utf8.decode(chunk, { stream: true });
    } catch {
      throw this.refuse("the file is neither valid UTF-8 text nor another allowed type");
    }
    if (hasBinaryControls(text)) throw this.refuse("the file is neither text nor another allowed type");
  }
}
