import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import type { TagsService } from "./tags.service";
import { presentTag } from "./tags.present";
import { Tag, TagCreate, TagList, TagParams, TagPatch } from "./tags.schemas";

const WRITE_ERRORS = ["validation_failed", "csrf_failed", "malformed_request", "payload_too_large"] as const;

export function tagsRoutes(service: TagsService) {
  return new Elysia({ name: "tags", prefix: "/api/v1" })
    .get("/tags", ({ request }) => ({ items: service.list(principalOf(request).user.id).map(presentTag) }), {
      detail: doc({ summary: "The current user's tags, by name", description: "Sorted by name, case-insensitively. Not paginated.", tags: ["tags"], ok: { status: 200, schema: TagList } }),
    })
    .post(
      "/tags",
      ({ body, request, set }) => {
        const t = presentTag(service.create(principalOf(request).user.id, body));
        set.status = 201;
        set.headers["location"] = `/api/v1/tags/${t.id}`;
        return t;
      },
      {
        body: TagCreate,
        detail: doc({
          summary: "Create a tag (name unique per user, case-insensitively)",
          description:
            "`name` is 1 to 64 characters after trimming, without control characters; a name the user already has in any letter case is `409 name_taken`. `color` (`#RRGGBB`) is required. Tags are put on tasks with `tag_ids`.",
          tags: ["tags"],
          ok: { status: 201, schema: Tag, headers: { Location: { description: "the tag's URL" } } },
          errors: [...WRITE_ERRORS, "name_taken"],
        }),
      },
    )
    .get("/tags/:tag_id", ({ params, request }) => presentTag(service.get(principalOf(request).user.id, params.tag_id)), {
      params: TagParams,
      detail: doc({ summary: "One tag", description: "An id that is not one of the user's tags is `404`.", tags: ["tags"], ok: { status: 200, schema: Tag }, errors: ["not_found", "validation_failed"] }),
    })
    .patch("/tags/:tag_id", ({ params, body, request }) => presentTag(service.update(principalOf(request).user.id, params.tag_id, body)), {
      params: TagParams,
      body: TagPatch,
      detail: doc({ summary: "Rename or recolour a tag", description: "`name` and `color` follow the rules of `POST /tags`; renaming to a name another of the user's tags has (in any letter case) is `409 name_taken`. Tasks carrying the tag show the change at once.", tags: ["tags"], ok: { status: 200, schema: Tag }, errors: [...WRITE_ERRORS, "not_found", "name_taken"] }),
    })
    .delete(
      "/tags/:tag_id",
      ({ params, request, set }) => {
        service.remove(principalOf(request).user.id, params.tag_id);
        set.status = 204;
      },
      {
        params: TagParams,
        detail: doc({ summary: "Delete a tag; it is removed from every task", description: "The tag is deleted and taken off every task that carried it (tasks in the trash too); the tasks are otherwise unchanged. An id that is not one of the user's tags is `404`.", tags: ["tags"], ok: { status: 204 }, errors: ["not_found", "csrf_failed", "validation_failed"] }),
      },
    );
}
