import { XMLBuilder, XMLParser, XMLValidator } from "fast-xml-parser";

/**
 * WebDAV XML in and out, through fast-xml-parser (no hand-written parser). The library keeps
 * prefixes as written, so element names are resolved here against the `xmlns` declarations in
 * scope: a client may write `D:prop`, `d:prop` or `prop` under a default namespace and each is
 * `{DAV:}prop`. A DOCTYPE is refused outright (WebDAV bodies never need one, and entity
 * expansion is what a hostile body would use it for).
 */

export const NS = {
  dav: "DAV:",
  caldav: "urn:ietf:params:xml:ns:caldav",
  cs: "http://calendarserver.org/ns/",
  apple: "http://apple.com/ns/ical/",
} as const;

/** An element with its namespace resolved. */
export interface XmlEl {
  ns: string;
  name: string;
  attrs: Record<string, string>;
  children: XmlEl[];
  text: string;
}

export class XmlError extends Error {}

/** A body at most this deep is plenty for any PROPFIND/REPORT filter; deeper is refused before walking it. */
const MAX_DEPTH = 32;
/** An XML NCName (a name without a colon): a letter or "_" first, then letters, digits, marks, ".", "-", "_", "·". */
const NCNAME = /^[\p{L}_][\p{L}\p{N}\p{M}._\-\u00B7]*$/u;

type Raw = Record<string, unknown> & { ":@"?: Record<string, string> };

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  processEntities: true,
});

/**
 * Elements in one body at most: a multiget of 5,000 hrefs is ~10,000; parsing is synchronous
 * (100,000 empty elements took 2.4 s of the event loop), so a larger body is refused before it.
 */
const MAX_ELEMENTS = 25_000;

export function parseXml(text: string): XmlEl {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new XmlError("a DOCTYPE is not accepted");
  let tags = 0;
  for (let i = text.indexOf("<"); i >= 0; i = text.indexOf("<", i + 1)) if (++tags > 2 * MAX_ELEMENTS) throw new XmlError(`more than ${MAX_ELEMENTS} elements`);
  let raw: Raw[];
  try {
    const v = XMLValidator.validate(text);
    if (v !== true) throw new XmlError(`not well-formed XML: ${v.err.msg}`);
    raw = parser.parse(text) as Raw[];
  } catch (e) {
    // The library's own limits (nesting) throw plain Errors: still the client's bad body.
    throw e instanceof XmlError ? e : new XmlError(`not accepted XML: ${String((e as Error).message).slice(0, 100)}`);
  }
  const root = raw.find((n) => Object.keys(n).some((k) => k !== ":@" && !k.startsWith("?") && k !== "#text" && k !== "#comment"));
  if (!root) throw new XmlError("no root element");
  return resolve(root, new Map([["xml", "http://www.w3.org/XML/1998/namespace"]]), 0);
}

function resolve(node: Raw, scope: Map<string, string>, depth: number): XmlEl {
  if (depth > MAX_DEPTH) throw new XmlError(`nested deeper than ${MAX_DEPTH} levels`);
  const key = Object.keys(node).find((k) => k !== ":@")!;
  const attrs = node[":@"] ?? {};
  let inner = scope;
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "xmlns" || k.startsWith("xmlns:")) {
      if (inner === scope) inner = new Map(scope);
      inner.set(k === "xmlns" ? "" : k.slice(6), v);
    }
  }
  const colon = key.indexOf(":");
  const prefix = colon < 0 ? "" : key.slice(0, colon);
  const name = colon < 0 ? key : key.slice(colon + 1);
  // Namespace well-formedness (XML Namespaces §3, §5): names the parser lets through as plain XML
  // names ("x:9abc", "a:b:c", an undeclared prefix) are refused here, since an unknown property's
  // name is written back in the answer, which must stay well-formed.
  if (!NCNAME.test(name) || (colon >= 0 && !NCNAME.test(prefix))) throw new XmlError(`"${key.slice(0, 60)}" is not a namespace-qualified XML name`);
  const ns = prefix === "" ? (inner.get("") ?? "") : inner.get(prefix);
  if (ns === undefined) throw new XmlError(`the namespace prefix "${prefix.slice(0, 60)}" is not declared`);
  const kids = (node[key] as Raw[]) ?? [];
  const children: XmlEl[] = [];
  let text = "";
  for (const k of kids) {
    if ("#text" in k) text += String(k["#text"]);
    else if (!Object.keys(k).some((x) => x.startsWith("#") || x.startsWith("?"))) children.push(resolve(k, inner, depth + 1));
  }
  const plain: Record<string, string> = {};
  for (const [k, v] of Object.entries(attrs)) if (k !== "xmlns" && !k.startsWith("xmlns:")) plain[k.includes(":") ? k.slice(k.indexOf(":") + 1) : k] = v;
  return { ns, name, attrs: plain, children, text };
}

export const child = (el: XmlEl, ns: string, name: string): XmlEl | undefined => el.children.find((c) => c.ns === ns && c.name === name);
export const children = (el: XmlEl, ns: string, name: string): XmlEl[] => el.children.filter((c) => c.ns === ns && c.name === name);
export const is = (el: XmlEl, ns: string, name: string): boolean => el.ns === ns && el.name === name;

// ---- output ------------------------------------------------------------------------------------

/** An element to write: `ns`+`name`, text or children. */
export interface Out {
  ns: string;
  name: string;
  text?: string;
  children?: Out[];
  attrs?: Record<string, string>;
}

export const el = (ns: string, name: string, content?: string | Out[], attrs?: Record<string, string>): Out => {
  const o: Out = { ns, name };
  if (typeof content === "string") o.text = content;
  else if (content) o.children = content;
  if (attrs) o.attrs = attrs;
  return o;
};
export const d = (name: string, content?: string | Out[]) => el(NS.dav, name, content);

const PREFIX: Record<string, string> = { [NS.dav]: "d", [NS.caldav]: "cal", [NS.cs]: "cs", [NS.apple]: "ical" };

const builder = new XMLBuilder({ preserveOrder: true, ignoreAttributes: false, attributeNamePrefix: "", suppressEmptyNode: true, processEntities: true });

/** Serialises a document; namespaces outside the four known ones get a prefix declared on the element itself. */
export function buildXml(root: Out): string {
  const tree = [toRaw(root, true)];
  return `<?xml version="1.0" encoding="utf-8"?>\n${builder.build(tree) as string}`;
}

/**
 * The same document as buildXml(`root` with `parts` as its children), serialised a part at a time
 * with `pause()` awaited every `every` parts: a multistatus of thousands of responses would
 * otherwise hold every other request while it is written.
 */
export async function buildXmlInParts(root: { ns: string; name: string }, parts: Out[], every: number, pause: () => Promise<void>): Promise<string> {
  if (parts.length === 0) return buildXml({ ns: root.ns, name: root.name });
  const MARK = "PARTS-GO-HERE";
  const [head, tail] = buildXml({ ns: root.ns, name: root.name, text: MARK }).split(MARK) as [string, string];
  const out = [head];
  for (const [i, part] of parts.entries()) {
    if (i > 0 && i % every === 0) await pause();
    out.push(builder.build([toRaw(part, false)]) as string);
  }
  out.push(tail);
  return out.join("");
}

function toRaw(o: Out, isRoot: boolean): Raw {
  const attrs: Record<string, string> = { ...(o.attrs ?? {}) };
  let prefix = PREFIX[o.ns];
  if (prefix === undefined) {
    prefix = "x";
    attrs["xmlns:x"] = o.ns;
  }
  if (isRoot) for (const [uri, p] of Object.entries(PREFIX)) attrs[`xmlns:${p}`] = uri;
  const tag = o.ns === "" ? o.name : `${prefix}:${o.name}`;
  if (o.ns === "") delete attrs["xmlns:x"];
  const content: Raw[] = o.text !== undefined ? [{ "#text": o.text }] : (o.children ?? []).map((c) => toRaw(c, false));
  const r: Raw = { [tag]: content };
  if (Object.keys(attrs).length) r[":@"] = attrs;
  return r;
}
