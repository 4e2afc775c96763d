/**
 * Imported first by src/main.ts, before anything imports Elysia: Elysia decides between its
 * development and production behaviour once, when its error module is evaluated, from
 * `Bun.env.NODE_ENV` read through a variable (elysia/dist/error.mjs `isProduction`), so neither a
 * later assignment nor a build-time `--define process.env.NODE_ENV` reaches it (measured: a
 * compiled probe with that define still had isProduction === false). In development mode every
 * ValidationError pretty-prints the whole rejected value into its message: a 60 KB login body of
 * nested arrays took 42 s and 3.2 GB there (issue 11). The server never wants that mode (its own
 * onError renders every error), so it is set here whatever the environment says, for the
 * executable and for `bun run start` alike; `serve` logs the mode Elysia actually took.
 */
process.env.NODE_ENV = "production";
