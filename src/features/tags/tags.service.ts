import type { Core } from "../../core/core";
import { writeTx } from "../../core/db";
import { nameTaken, notFound } from "../../core/errors";
import { newId } from "../../core/ids";
import type { TagDeleteHooks } from "./tags.delete-hooks";
import { deleteTag, findTag, findTagByKey, insertTag, listTags, tagNameKey, updateTag, type TagRow } from "./tags.repo";
import type { TagCreate, TagPatch } from "./tags.schemas";

export class TagsService {
  constructor(
    private readonly core: Core,
    private readonly deleteHooks: TagDeleteHooks,
  ) {}

  list(userId: string): TagRow[] {
    return listTags(this.core.db, userId);
  }

  get(userId: string, id: string): TagRow {
    const t = findTag(this.core.db, userId, id);
    if (!t) throw notFound("tag");
    return t;
  }

  create(userId: string, input: TagCreate): TagRow {
    return writeTx(this.core.db, (tx) => {
      const key = tagNameKey(input.name);
      if (findTagByKey(tx, userId, key)) throw nameTaken(`a tag named "${input.name}" already exists`);
      const now = this.core.clock.now().toISOString();
      const id = newId();
      insertTag(tx, { id, userId, name: input.name, nameKey: key, color: input.color, createdAt: now, updatedAt: now });
      return findTag(tx, userId, id)!;
    });
  }

  update(userId: string, id: string, input: TagPatch): TagRow {
    return writeTx(this.core.db, (tx) => {
      if (!findTag(tx, userId, id)) throw notFound("tag");
      const set: { name?: string; nameKey?: string; color?: string; updatedAt: string } = { updatedAt: this.core.clock.now().toISOString() };
      if (input.name !== undefined) {
        const key = tagNameKey(input.name);
        if (findTagByKey(tx, userId, key, id)) throw nameTaken(`a tag named "${input.name}" already exists`);
        set.name = input.name;
        set.nameKey = key;
      }
      if (input.color !== undefined) set.color = input.color;
      updateTag(tx, userId, id, set);
      return findTag(tx, userId, id)!;
    });
  }

  /** Removes the tag from every task (FK cascade on task_tags). */
  remove(userId: string, id: string): void {
    writeTx(this.core.db, (tx) => {
      if (!findTag(tx, userId, id)) throw notFound("tag");
      this.deleteHooks.deleting(tx, id, this.core.clock.now().toISOString());
      deleteTag(tx, userId, id);
    });
  }
}
