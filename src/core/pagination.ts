import { z } from "zod";
import { maxChars } from "./text";

const LIMIT_MESSAGE = "limit must be an integer from 1 to 100";

/** `limit` (1..100, default 50) and `cursor` query parameters of every cursor page. */
export const pageQueryShape = {
  // Decimal digits only: z.coerce would also take "1e1", "0x10", " 7" or "+5" as numbers.
  limit: z
    // The default sits inside the preprocess so that the OpenAPI document shows it.
    .preprocess(
      (v) => (typeof v === "string" && /^[0-9]{1,4}$/.test(v) ? Number(v) : v),
      z.number({ error: LIMIT_MESSAGE }).int(LIMIT_MESSAGE).min(1, LIMIT_MESSAGE).max(100, LIMIT_MESSAGE).default(50),
    ),
  cursor: maxChars(z.string().min(1), 2048).optional(),
};
export const PageQuery = z.strictObject(pageQueryShape);
export type PageQuery = z.infer<typeof PageQuery>;
