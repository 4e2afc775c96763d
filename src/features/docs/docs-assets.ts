// Embedded in the executable so the docs page works on a LAN with no internet. Loaded on first
// use only (dynamic import): ~2 MB of strings the server does not need until someone opens /api/docs.
import swaggerBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "text" };
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "text" };

export { swaggerBundle, swaggerCss };
