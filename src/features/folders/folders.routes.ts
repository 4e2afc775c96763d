import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import type { FoldersService } from "./folders.service";
import { presentFolder } from "./folders.present";
import { Folder, FolderCreate, FolderList, FolderParams, FolderPatch, ReorderBody } from "./folders.schemas";

const WRITE_ERRORS = ["validation_failed", "csrf_failed", "malformed_request", "payload_too_large"] as const;

export function foldersRoutes(service: FoldersService) {
  return new Elysia({ name: "folders", prefix: "/api/v1" })
    .get("/folders", ({ request }) => ({ items: service.list(principalOf(request).user.id).map(presentFolder) }), {
      detail: doc({ summary: "Folders (not deleted), by position", description: "The user's folders in their `position` order (set by `POST /folders/reorder`; a new folder goes last). Deleted folders are not listed. Not paginated.", tags: ["folders"], ok: { status: 200, schema: FolderList } }),
    })
    .post(
      "/folders",
      ({ body, request, set }) => {
        const f = presentFolder(service.create(principalOf(request).user.id, body));
        set.status = 201;
        set.headers["location"] = `/api/v1/folders/${f.id}`;
        return f;
      },
      {
        body: FolderCreate,
        detail: doc({
          summary: "Create a folder",
          description:
            "`name` is 1 to 200 characters after trimming, without control characters; names need not be unique. The folder goes last. Lists are put in it with `POST /lists/{list_id}/move` or `folder_id` on `POST /lists`.",
          tags: ["folders"],
          ok: { status: 201, schema: Folder, headers: { Location: { description: "the folder's URL" } } },
          errors: [...WRITE_ERRORS],
        }),
      },
    )
    .post("/folders/reorder", ({ body, request }) => ({ items: service.reorder(principalOf(request).user.id, body.ids).map(presentFolder) }), {
      body: ReorderBody,
      detail: doc({
        summary: "Reorder folders: `ids` names every active folder exactly once",
        description:
          "Positions become the order of `ids`. An id that is not one of the user's folders, an id named twice, or a folder left out is `422 validation_failed` (each listed in `errors`), and nothing changes. Answers every folder in the new order.",
        tags: ["folders"],
        ok: { status: 200, schema: FolderList },
        errors: [...WRITE_ERRORS],
      }),
    })
    .get("/folders/:folder_id", ({ params, request }) => presentFolder(service.get(principalOf(request).user.id, params.folder_id)), {
      params: FolderParams,
      detail: doc({ summary: "One folder", description: "A deleted folder, or one that is not the user's, is `404`.", tags: ["folders"], ok: { status: 200, schema: Folder }, errors: ["not_found", "validation_failed"] }),
    })
    .patch(
      "/folders/:folder_id",
      ({ params, body, request }) => presentFolder(service.update(principalOf(request).user.id, params.folder_id, body)),
      {
        params: FolderParams,
        body: FolderPatch,
        detail: doc({ summary: "Rename a folder", description: "`name` follows the rules of `POST /folders`; a body without `name` changes nothing. A deleted folder is `404`.", tags: ["folders"], ok: { status: 200, schema: Folder }, errors: [...WRITE_ERRORS, "not_found"] }),
      },
    )
    .delete(
      "/folders/:folder_id",
      ({ params, request, set }) => {
        service.remove(principalOf(request).user.id, params.folder_id);
        set.status = 204;
      },
      {
        params: FolderParams,
        detail: doc({
          summary: "Delete a folder (soft); its lists move to root level",
          description:
            "The folder disappears from every answer (`404` from then on); its lists, the archived ones too, move to the root level (`folder_id: null`) and keep their tasks. Nothing is deleted with it.",
          tags: ["folders"],
          ok: { status: 204 },
          errors: ["not_found", "csrf_failed", "validation_failed"],
        }),
      },
    );
}
