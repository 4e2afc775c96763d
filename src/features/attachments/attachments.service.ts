import type { Core } from "../../core/core";
import { readSnapshot, readTx, writeTx, type Conn } from "../../core/db";
import { AppError, notFound, payloadTooLarge, validationFailed } from "../../core/errors";
import { newId } from "../../core/ids";
import { findVisibleTask } from "../tasks/tasks.repo";
import { requireEditor } from "../lists/lists.access";
import type { TaskPurgeHooks } from "../tasks/tasks.purge-hooks";
import {
  allIds,
  deleteAttachment,
  deleteByIds,
  findAttachmentById,
  idsOfTasks,
  insertAttachment,
  listOfTask,
  totalUsedBytes,
  usedBytes,
  type AttachmentRecord,
} from "./attachments.repo";
import type { MultipartReader } from "../../core/streams/multipart";
import { cleanFilename } from "./attachments.names";
import { AttachmentStorage, type TempFile } from "./attachments.storage";
import { ContentTypeCheck } from "./attachments.types";
import { assertWithinQuota, attachmentQuota } from "./attachments.quota";

/** What a download needs: the row and where its bytes are. */
export interface StoredAttachment {
  record: AttachmentRecord;
  path: string;
}

export interface SweepResult {
  temporaryFiles: number;
  filesWithoutRow: number;
  rowsWithoutFile: string[];
}

const unsupported = (detail: string) => new AppError("unsupported_media_type", detail, { errors: [{ path: "file", message: detail }] });

/** Attachments: upload (streamed), list, download, delete; files follow their rows. No HTTP here. */
export class AttachmentsService {
  readonly storage: AttachmentStorage;

  constructor(
    private readonly core: Core,
    purgeHooks: TaskPurgeHooks,
  ) {
    this.storage = new AttachmentStorage(core.dataDir);
    core.metrics.gauge({ name: "app_attachment_bytes", help: "Bytes all users' attachments take", collect: () => totalUsedBytes(core.db) });
    // Purging tasks (trash, list purge) removes their rows by FK cascade; the files go after the commit.
    purgeHooks.register((tx, userId, taskIds) => {
      const ids = idsOfTasks(tx, taskIds);
      if (ids.length === 0) return;
      return () => {
        for (const id of ids) this.storage.remove(id);
      };
    });
  }

  get maxBytes(): number {
    return this.core.config.attachmentMaxBytes;
  }

  /** Bytes all of one user's attachments may take, or null (APP_ATTACHMENT_QUOTA_BYTES=0: no quota). */
  get quotaBytes(): number | null {
    return attachmentQuota(this.core.config);
  }

  /** The task named in the URL, visible to the user (the tasks feature's rule); 404 otherwise. */
  private requireVisibleTask(c: Conn, userId: string, taskId: string, write = false): void {
    const task = findVisibleTask(c, userId, taskId);
    if (!task) throw notFound("task");
    if (write) requireEditor(task.role);
  }

  /**
   * The user's attachment whose task is visible to them: another user's, or one of a task in the
   * trash or of an archived list, is absent like a missing one.
   */
  private visibleAttachment(c: Conn, userId: string, id: string, write = false): AttachmentRecord | null {
    const record = findAttachmentById(c, id);
    const task = record && findVisibleTask(c, userId, record.task_id);
    if (!task) return null;
    if (write) requireEditor(task.role);
    return record;
  }

  list(userId: string, taskId: string): AttachmentRecord[] {
    return readTx(this.core.db, (tx) => {
      this.requireVisibleTask(tx, userId, taskId);
      return listOfTask(tx, taskId);
    });
  }

  get(userId: string, id: string): StoredAttachment {
    const record = readSnapshot(this.core.db, (c) => this.visibleAttachment(c, userId, id));
    if (!record) throw notFound("attachment");
    if (!this.storage.exists(record.id)) {
      // Bytes lost outside the app (the start-up sweep removes such rows); never a 200 that breaks mid-body.
      this.core.logger.error("attachment file missing", { attachment_id: record.id });
      throw notFound("attachment");
    }
    return { record, path: this.storage.pathOf(record.id) };
  }

  /** Deletes the row, then (after the commit) the file. */
  remove(userId: string, id: string): void {
    writeTx(this.core.db, (tx) => {
      if (!this.visibleAttachment(tx, userId, id, true)) throw notFound("attachment");
      deleteAttachment(tx, id);
    });
    try {
      this.storage.remove(id);
    } catch (e) {
      // The row is gone; the start-up sweep removes the file if this failed.
      this.core.logger.warn("attachment file removal failed", { attachment_id: id, error: (e as Error).message });
    }
  }

  /**
   * Streams the `file` part to a temporary file (counted, hashed, type-checked on the way), then
   * inserts the row and renames the file into place in one transaction. Whatever fails, the
   * temporary file is removed; the row exists only if the file is in place. With a quota, reading
   * stops as soon as the file passes what is left of it (never written whole), and the commit
   * checks again under the write lock (two uploads at once must not pass it together).
   */
  async upload(userId: string, taskId: string, body: MultipartReader): Promise<AttachmentRecord> {
    let temp: TempFile | null = null;
    try {
      const quota = this.quotaBytes;
      const usedAtStart = readTx(this.core.db, (tx) => {
        this.requireVisibleTask(tx, userId, taskId, true);
        return quota === null ? 0 : usedBytes(tx, userId);
      });
      const left = quota === null ? Infinity : quota - usedAtStart;
      let part = await body.nextPart();
      while (part && part.field !== "file") part = await body.nextPart();
      if (!part) throw validationFailed([{ path: "file", message: "a multipart field `file` is required" }], "no file in the upload");
      const filename = cleanFilename(part.filename);
      const max = this.maxBytes;
      temp = this.storage.createTemp();
      const hasher = new Bun.CryptoHasher("sha256");
      let size = 0;
      const check = new ContentTypeCheck(part.contentType, filename, unsupported);
      for await (const chunk of body.partData()) {
        size += chunk.byteLength;
        // Past what is left of the quota: refused at once (a file over the size limit too is 413 payload_too_large when the quota leaves more than that).
        if (left < max) assertWithinQuota(quota, usedAtStart, size);
        if (size > max) throw payloadTooLarge(max);
        hasher.update(chunk);
        check.push(chunk);
        temp.write(chunk);
      }
      if (size === 0) throw validationFailed([{ path: "file", message: "the file is empty" }], "the file is empty");
      const d = check.end();
      // The body must end with its closing boundary (a cut-off upload is not stored); other
      // fields are read and ignored.
      while (await body.nextPart()) {
        for await (const _ of body.partData()) {
          // ignored field
        }
      }
      temp.finish();
      const record: AttachmentRecord = {
        id: newId(),
        user_id: userId,
        task_id: taskId,
        filename,
        content_type: d.contentType,
        size,
        sha256: hasher.digest("hex"),
        created_at: this.core.clock.now().toISOString(),
      };
      const file = temp;
      try {
        writeTx(this.core.db, (tx) => {
          // Checked again under the write lock: the task may have been purged during the upload.
          this.requireVisibleTask(tx, userId, taskId, true);
          if (quota !== null) assertWithinQuota(quota, usedBytes(tx, userId), size);
          insertAttachment(tx, record);
          this.storage.commit(file, record.id);
        });
      } catch (e) {
        if (file.renamed) this.storage.remove(record.id);
        throw e;
      }
      this.storage.syncDir();
      return record;
    } catch (e) {
      await body.cancel();
      throw e;
    } finally {
      temp?.discard();
    }
  }

  /**
   * Start-up: temporary files of interrupted uploads, files without a row (a crash between the
   * rename and the commit, or a delete whose file removal failed) and rows without a file (lost
   * bytes: the row is removed so it never answers a broken download). No upload is in flight.
   */
  sweepOrphans(): SweepResult {
    const temporaryFiles = this.storage.clearTemp();
    const ids = new Set(allIds(this.core.db));
    const present = new Set<string>();
    let filesWithoutRow = 0;
    for (const name of this.storage.storedNames()) {
      if (ids.has(name) && this.storage.exists(name)) present.add(name);
      else {
        this.storage.removeName(name);
        filesWithoutRow++;
      }
    }
    const rowsWithoutFile = [...ids].filter((id) => !present.has(id));
    if (rowsWithoutFile.length) writeTx(this.core.db, (tx) => deleteByIds(tx, rowsWithoutFile));
    return { temporaryFiles, filesWithoutRow, rowsWithoutFile };
  }
}
