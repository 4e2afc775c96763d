import { z } from "zod";

/** `limit` (1..100, default 50) and `cursor` query parameters of every cursor page. */
export const pageQueryShape = {
  limit: z.coerce
    .number({ error: "limit must be an integer from 1 to 100" })
    .int("limit must be an integer from 1 to 100")
    .min(1, "limit must be an integer from 1 to 100")
    .max(100, "limit must be an integer from 1 to 100")
    .default(50),
  cursor: z.string().min(1).max(2048).optional(),
};
export const PageQuery = z.object(pageQueryShape).strict();
export type PageQuery = z.infer<typeof PageQuery>;
