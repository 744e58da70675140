// The limits of one `send.batch` call (src/control/methods.ts), in their own module so
// `amesh send`, which batches its input to fit them, does not load zod and the
// control contract's schemas to learn two numbers.

/** at most this many sends in one `send.batch` */
export const MAX_BATCH_SENDS = 1024
/** at most this many characters of text and payload JSON in one `send.batch` */
export const MAX_BATCH_CHARS = 8 * 1024 * 1024
