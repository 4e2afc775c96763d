import type { List, Tag } from "../api/types";

/** What the tasks page hands the task detail: the lists and tags to choose from, and a way to refresh the tags. */
export interface TaskContext {
  lists: List[];
  tags: Tag[];
  reloadTags: () => void;
  /** The signed-in user (shared lists: "added by" is shown for tasks someone else created). */
  userId?: string;
}
