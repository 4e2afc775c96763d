// The webhook receiver of bench/reminders-burst.ts: answers 200 to every POST, counts them and the
// distinct X-Delivery-Id values; GET /count reports { count, last (epoch ms), duplicates }.
// Prints its base URL on its first line.
const seen = new Set<string>();
let count = 0;
let last = 0;
let duplicates = 0;
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    if (req.method === "GET") return Response.json({ count, last, duplicates });
    await req.arrayBuffer();
    const id = req.headers.get("x-delivery-id") ?? "";
    if (seen.has(id)) duplicates++;
    else {
      seen.add(id);
      count++;
      last = Date.now();
    }
    return new Response("ok");
  },
});
console.log(`http://127.0.0.1:${server.port}`);
