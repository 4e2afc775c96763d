// Replaced by build.ts with the bundled web app while it compiles dist/app, then restored.
// null: running from source, so src/features/web builds the app from web/ on first request.
import type { WebBundle } from "../../../web/build-web";

export const embeddedWeb: WebBundle | null = null;
