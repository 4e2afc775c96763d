/**
 * One turn of the event loop (setImmediate, ~12 µs): the requests that arrived meanwhile run before
 * the caller goes on. Long work — a big CalDAV answer, a feed, a burst of reminder deliveries — is
 * cut into slices with this between them, so no request waits for more than one slice.
 */
export const yieldToRequests = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));
