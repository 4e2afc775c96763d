import { text } from "drizzle-orm/sqlite-core";

/** A row's creation and last-change instants (text, as the API writes instants), both required. */
export function timestamps() {
  return { createdAt: text("created_at").notNull(), updatedAt: text("updated_at").notNull() };
}
