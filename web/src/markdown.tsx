// Markdown → Preact elements, never → HTML. Memo text is only ever placed in text nodes and a few
// attributes (link href restricted to http/https/mailto), so no script from a memo can run:
// there is no innerHTML anywhere in the app.
import type { ComponentChildren, VNode } from "preact";

const SAFE_URL = /^(https?:|mailto:)/i;

function inline(text: string, key = 0): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  // code, bold, italic, links, in that order of precedence
  const re = /(`[^`]+`)|(\*\*[^*]+\*\*|__[^_]+__)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(\[[^\]]+\]\([^)\s]+\))|(https?:\/\/[^\s<]+[^\s<.,;:!?)])/;
  let rest = text;
  let k = key;
  while (rest) {
    const m = re.exec(rest);
    if (!m) {
      out.push(rest);
      break;
    }
    if (m.index > 0) out.push(rest.slice(0, m.index));
    const s = m[0];
    if (m[1]) out.push(<code key={k++}>{s.slice(1, -1)}</code>);
    else if (m[2]) out.push(<strong key={k++}>{inline(s.slice(2, -2), k * 100)}</strong>);
    else if (m[3]) out.push(<em key={k++}>{inline(s.slice(1, -1), k * 100)}</em>);
    else if (m[4]) {
      const lm = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(s)!;
      const href = lm[2]!;
      out.push(SAFE_URL.test(href) ? <a key={k++} href={href} target="_blank" rel="noopener noreferrer nofollow">{inline(lm[1]!, k * 100)}</a> : lm[1]!);
    } else if (m[5]) out.push(<a key={k++} href={s} target="_blank" rel="noopener noreferrer nofollow">{s}</a>);
    rest = rest.slice(m.index + s.length);
  }
  return out;
}

export function Markdown({ text }: { text: string }): VNode {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const blocks: VNode[] = [];
  let i = 0;
  let key = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (/^```/.test(line)) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !/^```/.test(lines[i]!)) body.push(lines[i++]!);
      i++;
      blocks.push(<pre key={key++}><code>{body.join("\n")}</code></pre>);
      continue;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      const level = Math.min(h[1]!.length + 2, 6); // memo headings sit below the page's own
      const Tag = `h${level}` as "h3";
      blocks.push(<Tag key={key++} dir="auto">{inline(h[2]!)}</Tag>);
      i++;
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items: VNode[] = [];
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i]!)) {
        const itemText = lines[i]!.replace(/^\s*([-*+]|\d+[.)])\s+/, "");
        const task = /^\[([ xX])\]\s+(.*)$/.exec(itemText);
        items.push(
          <li key={items.length} dir="auto">
            {/* A task item's checkbox is labelled by its own text (read-only: memos are edited as text). */}
            {task ? <label class="md-task"><input type="checkbox" checked={task[1] !== " "} disabled /> {inline(task[2]!)}</label> : inline(itemText)}
          </li>,
        );
        i++;
      }
      blocks.push(ordered ? <ol key={key++}>{items}</ol> : <ul key={key++}>{items}</ul>);
      continue;
    }
    if (/^>\s?/.test(line)) {
      const body: string[] = [];
      while (i < lines.length && /^>\s?/.test(lines[i]!)) body.push(lines[i++]!.replace(/^>\s?/, ""));
      blocks.push(<blockquote key={key++} dir="auto">{inline(body.join(" "))}</blockquote>);
      continue;
    }
    if (/^(---|\*\*\*)\s*$/.test(line)) {
      blocks.push(<hr key={key++} />);
      i++;
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && lines[i]!.trim() && !/^(```|#{1,6}\s|>|\s*([-*+]|\d+[.)])\s)/.test(lines[i]!)) para.push(lines[i++]!);
    const children: ComponentChildren[] = [];
    para.forEach((p, n) => {
      if (n) children.push(<br key={`b${n}`} />);
      children.push(...inline(p, n * 1000));
    });
    blocks.push(<p key={key++} dir="auto">{children}</p>);
  }
  return <div class="markdown" dir="auto">{blocks}</div>;
}
