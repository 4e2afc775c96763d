/**
 * The attachment rules a restore (src/transfer/) applies as the API does: the per-user quota and
 * the cleaning of a client's file name. Pure functions; the storage and the rows stay the repo's
 * and the service's.
 */
export { assertWithinQuota, attachmentQuota, exceedsQuota } from "./attachments.quota";
export { cleanFilename } from "./attachments.names";
