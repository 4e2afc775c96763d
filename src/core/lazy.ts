/**
 * A value made on first use and shared afterwards: `lazy(() => import("./heavy").then(...))`.
 *
 * The executable is one bundle without code splitting, but the bundler evaluates a module that is
 * reached only through `await import()` when that import first runs. Rarely used features (backup,
 * legacy files, the lunar calendar) are loaded that way, so an idle server does not hold their code
 * and schemas. Every caller gets the same promise; a failed load is not kept (the next call tries
 * again).
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | null = null;
  return () => {
    pending ??= load().catch((e: unknown) => {
      pending = null;
      throw e;
    });
    return pending;
  };
}
