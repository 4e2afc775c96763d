/**
 * Failpoints for the fault tests: `APP_FAILPOINT=restore.after_commit` (comma-separated) makes the
 * process kill itself (SIGKILL, as `kill -9`) when it reaches that point; with
 * `APP_FAILPOINT_ACTION=throw` it throws instead. Inert unless the variable is set.
 */
export function failpoint(name: string): void {
  const v = process.env.APP_FAILPOINT;
  if (!v || !v.split(",").includes(name)) return;
  if (process.env.APP_FAILPOINT_ACTION === "throw") throw new Error(`failpoint ${name}`);
  process.kill(process.pid, "SIGKILL");
}
