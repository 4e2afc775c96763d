import { expect, test } from "bun:test";
import { lazy } from "../../src/core/lazy";

// src/core/lazy.ts: what the lazily loaded features (backup, legacy files, lunar calendar) rely on.
test("lazy: concurrent first callers share one load; a failed load is not kept, the next call retries", async () => {
  let calls = 0;
  const get = lazy(async () => {
    calls++;
    await Bun.sleep(5);
    if (calls === 1) throw new Error("boom");
    return { n: calls };
  });
  const [a, b] = await Promise.allSettled([get(), get()]);
  expect(a.status).toBe("rejected");
  expect(b.status).toBe("rejected");
  expect(calls).toBe(1);
  const [c, d] = await Promise.all([get(), get()]);
  expect(c).toBe(d);
  expect(c).toEqual({ n: 2 });
  expect(await get()).toBe(c);
  expect(calls).toBe(2);
});
