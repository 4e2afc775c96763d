// The multipart reader lives in core/streams/multipart.ts (attachments, backup and legacy share it);
// this path is kept for test/attachments.multipart.test.ts.
export { BodyAborted, MultipartReader, boundaryOf, parsePartHeaders, type PartHeaders } from "../../core/streams/multipart";
