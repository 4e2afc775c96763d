// A QR code of a text as SVG, drawn from `uqr` (loaded on first use, in a chunk of its own): the
// CalDAV address in Settings → Devices & apps, a feed's webcal link in Settings → Calendar feeds.
import { useEffect, useState } from "preact/hooks";
import { t } from "../i18n";

type Uqr = typeof import("uqr");
let uqr: Promise<Uqr> | null = null;

/** A QR code of `text` as SVG (dark modules on white, whatever the theme, so a camera reads it). */
export function QrCode({ text, label }: { text: string; label: string }) {
  const [matrix, setMatrix] = useState<boolean[][] | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    uqr ??= import("uqr");
    uqr.then(
      (m) => live && setMatrix(m.encode(text, { ecc: "M", border: 2 }).data),
      () => {
        uqr = null;
        if (live) setFailed(true);
      },
    );
    return () => {
      live = false;
    };
  }, [text]);
  if (failed) return <p class="muted small">{t.tokens.qrUnavailable}</p>;
  if (!matrix) return <div class="qr" aria-busy="true" />;
  const size = matrix.length;
  let d = "";
  matrix.forEach((row, y) => row.forEach((on, x) => on && (d += `M${x} ${y}h1v1h-1z`)));
  return (
    <svg class="qr" role="img" aria-label={label} viewBox={`0 0 ${size} ${size}`} width={176} height={176} shape-rendering="crispEdges">
      <rect width={size} height={size} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}
