// Exit statuses of the amesh processes that scripts and supervisors act on.

/** A read-only command (or `join --info`) found no daemon running for the home. */
export const EXIT_NOT_RUNNING = 3

/** The store is full or faulted and could not be reopened (EX_TEMPFAIL: retry once space returns; a supervisor may restart). */
export const EXIT_STORE_FAULT = 75
