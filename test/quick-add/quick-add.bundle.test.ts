// chrono-node (~55 KB gzipped with its locales) is loaded with the quick-add box, not with the
// first page: the entry script only names the chunk that holds it, and stays within the budget.
import { expect, test } from "bun:test";
import { buildWeb } from "../../web/build-web";

test("the quick-add parser is a chunk of its own; the first page stays within 60 KB gzipped", async () => {
  const b = await buildWeb();
  const js = Object.entries(b.assets).filter(([n]) => n.endsWith(".js"));
  const entry = js.find(([n]) => /^main-.*\.js$/.test(n))!;
  // A string chrono-node's English parsers tag their results with.
  const chrono = js.filter(([, a]) => a.body.includes("casualReference/tomorrow"));
  expect(chrono.length).toBe(1);
  expect(chrono[0]![0]).not.toBe(entry[0]);
  expect(entry[1].body).toContain(chrono[0]![0]); // imported on demand by name
  console.log(`web: first-page JS ${(b.jsGzip.firstPage / 1024).toFixed(1)} KiB gzipped; quick-add parser chunk ${(Bun.gzipSync(chrono[0]![1].body).length / 1024).toFixed(1)} KiB gzipped`);
  expect(b.jsGzip.firstPage).toBeLessThanOrEqual(60 * 1024);
});
