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
      detail: doc({ summary: "Folders (not deleted), by position", tags: ["folders"], ok: { status: 200, schema: FolderList } }),
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
        tags: ["folders"],
        ok: { status: 200, schema: FolderList },
        errors: [...WRITE_ERRORS],
      }),
    })
    .get("/folders/:folder_id", ({ params, request }) => presentFolder(service.get(principalOf(request).user.id, params.folder_id)), {
      params: FolderParams,
      detail: doc({ summary: "One folder", tags: ["folders"], ok: { status: 200, schema: Folder }, errors: ["not_found", "validation_failed"] }),
    })
    .patch(
      "/folders/:folder_id",
      ({ params, body, request }) => presentFolder(service.update(principalOf(request).user.id, params.folder_id, body)),
      {
        params: FolderParams,
        body: FolderPatch,
        detail: doc({ summary: "Rename a folder", tags: ["folders"], ok: { status: 200, schema: Folder }, errors: [...WRITE_ERRORS, "not_found"] }),
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
          tags: ["folders"],
          ok: { status: 204 },
          errors: ["not_found", "csrf_failed", "validation_failed"],
        }),
      },
    );
}
