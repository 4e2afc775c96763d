// The direction rules of docs/ARCHITECTURE.md, made executable: `bun run depcheck` (also a step of
// .ci/run). A rule broken here is a design question, not a lint nit: fix the dependency (move the
// shared piece down, or invert it with a hook as src/features/tasks/tasks.purge-hooks.ts does)
// rather than loosening the rule. Type-only imports count: they couple the files all the same.

/** The CRUD features that stand alone: they meet only in src/core. */
const STANDALONE = "(tags|memos|habits|countdowns|account)";

/**
 * What src/transfer (format adapters: bytes ⇄ records ⇄ feature repos) may use of a feature:
 * - `*.repo.ts`: the feature's own export/restore functions; the only file naming its tables;
 * - `*.schemas.ts`, `*.rules.ts`, `*.types.ts`: what a record must satisfy, so a restored or
 *   imported row obeys the same rules as an API write (pure: no I/O, no service, no HTTP);
 * - `*.present.ts`: row → API shape, so an export writes what the API returns instead of a copy.
 * Never a service, a route or any other module: those hold use cases of their own (transactions,
 * audit, hooks) that an adapter must not re-enter.
 */
// Hooks (purge-hooks) are how a feature lets others act inside its transactions; a restore that replaces tasks runs them.
const TRANSFER_MAY_USE = "\\.(repo|schemas|rules|types|present|purge-hooks)\\.ts$";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "No import cycles in src/ or web/: a cycle means two files are one module in two places. (Cycles between feature folders, e.g. lists.service → tasks.repo with tasks.service → lists.repo, are caught by the chain rules below.)",
      from: { path: "^(src|web)/" },
      to: { circular: true },
    },
    {
      name: "core-stays-below",
      severity: "error",
      comment: "src/core is what everything builds on: it never imports a feature, src/transfer, or the app's root (app.ts, main.ts).",
      from: { path: "^src/core/" },
      to: { path: ["^src/features/", "^src/transfer/", "^src/app\\.ts$", "^src/main\\.ts$"] },
    },
    {
      name: "nothing-imports-the-root",
      severity: "error",
      comment: "src/app.ts and src/main.ts assemble the program; features and adapters never import them.",
      from: { path: "^src/(features|transfer)/" },
      to: { path: ["^src/app\\.ts$", "^src/main\\.ts$"] },
    },
    {
      name: "features-do-not-import-transfer",
      severity: "error",
      comment: "src/transfer reads the features; no feature depends on a format adapter.",
      from: { path: "^src/features/", pathNot: "^src/features/dav/" },
      to: { path: "^src/transfer/" },
    },
    {
      name: "dav-uses-the-one-vtodo-mapping",
      severity: "error",
      comment: "CalDAV (a feature: its writes go through the services) and the .ics importer share one VTODO mapping (issue 16: import and sync agree); that pure module and its two pure helpers are all dav may use of src/transfer.",
      from: { path: "^src/features/dav/" },
      to: { path: "^src/transfer/", pathNot: "^src/transfer/import/(vtodo\\.mapping|reminder\\.mapping|import\\.dates)\\.ts$" },
    },
    {
      name: "chain-folders",
      severity: "error",
      comment: "Dependencies point one way: folders ← lists ← tasks ← {recurrence, attachments}. folders imports none of the others; an upward need goes through a hook.",
      from: { path: "^src/features/folders/" },
      to: { path: "^src/features/(lists|tasks|recurrence|attachments)/" },
    },
    {
      name: "chain-lists",
      severity: "error",
      comment: "folders ← lists ← tasks ← {recurrence, attachments}: lists may use folders, never tasks, recurrence or attachments.",
      from: { path: "^src/features/lists/" },
      to: { path: "^src/features/(tasks|recurrence|attachments)/" },
    },
    {
      name: "chain-tasks",
      severity: "error",
      comment: "folders ← lists ← tasks ← {recurrence, attachments}: tasks never imports recurrence or attachments (they register hooks with tasks instead).",
      from: { path: "^src/features/tasks/" },
      to: { path: "^src/features/(recurrence|attachments)/" },
    },
    {
      name: "chain-leaves",
      severity: "error",
      comment: "recurrence and attachments both sit on tasks and do not import each other.",
      from: { path: "^src/features/(recurrence|attachments)/" },
      to: { path: "^src/features/(recurrence|attachments)/", pathNot: "^src/features/$1/" },
    },
    {
      name: "standalone-features",
      severity: "error",
      comment: "tags, memos, habits, countdowns and account do not import each other; what they share lives in src/core.",
      from: { path: `^src/features/${STANDALONE}/` },
      to: { path: `^src/features/${STANDALONE}/`, pathNot: "^src/features/$1/" },
    },
    {
      name: "transfer-through-repos",
      severity: "error",
      comment: "src/transfer reaches a feature only through its repo (export/restore functions) and its pure schemas, rules, types and presenters; never a service, a route or another module.",
      from: { path: "^src/transfer/" },
      to: { path: "^src/features/", pathNot: TRANSFER_MAY_USE },
    },
  ],
  options: {
    // TypeScript is read with swc: dependency-cruiser drives the TypeScript compiler only up to 6.x
    // (this project is on 7, which has no JavaScript API yet). Switch to parser "tsc" once it does.
    parser: "swc",
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["^node_modules/", "^dist/"] },
    // swc reports type-only imports as dependencies (dependencyTypes "type-only"), as the header wants.
    // Resolved as `bun run` and tsc resolve them: `#web-assets` (package.json "imports") under the
    // default condition, i.e. the tracked src/features/web/web-assets.source.ts.
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".json", ".d.ts"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
