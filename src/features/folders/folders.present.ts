import type { FolderRow } from "./folders.repo";
import type { Folder } from "./folders.schemas";

export function presentFolder(f: FolderRow): Folder {
  return { id: f.id, name: f.name, position: f.position, created_at: f.createdAt, updated_at: f.updatedAt };
}
