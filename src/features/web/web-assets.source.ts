// What `#web-assets` resolves to when running from source (bun src/main.ts, bun test, bun --watch, tsc):
// null, so src/features/web bundles the app from web/ on first request. `bun run build` resolves the same
// specifier, under its `app-embed` condition (package.json "imports"), to dist/web-assets.generated.ts:
// the bundled app, written there by build.ts (an ignored file; no tracked source changes during a build).
import type { WebBundle } from "../../../web/build-web";

export const embeddedWeb: WebBundle | null = null;
