import { Context, type Effect, type Stream } from "effect"

/** A kept file as the store has it: what it is, how long, and its bytes read lazily. */
export interface StoredMedia {
  readonly contentType: string
  readonly size: number
  /** Read from the store as the stream is pulled: a large file is never held whole. */
  readonly bytes: Stream.Stream<Uint8Array>
}

/**
 * Where inbound files' bytes are kept (docs/contract-messaging.md §5.8). Adapters: a directory
 * (the default), PostgreSQL in chunks (for several servers on one database), memory. Every
 * method streams: a 100 MB document passes through in small pieces.
 */
export class MediaStore extends Context.Service<
  MediaStore,
  {
    /**
     * Keeps `bytes` under `key`, replacing what was there, and answers their size. The file is
     * seen by `get` only once whole: when the stream fails, the store keeps nothing of it and
     * fails with the stream's error.
     */
    readonly put: <E>(
      key: MediaKey,
      contentType: string,
      bytes: Stream.Stream<Uint8Array, E>
    ) => Effect.Effect<number, E>
    readonly get: (key: MediaKey) => Effect.Effect<StoredMedia | undefined>
    readonly remove: (key: MediaKey) => Effect.Effect<void>
  }
>()("core/MediaStore") {}

/**
 * Which file: its account's, by the id of the message or the uploaded file it is (ids are unique
 * per account only). The account is a key of its own, not part of a string: the SQL store keys
 * its rows by it (docs/scaling.md).
 */
export interface MediaKey {
  readonly accountId: string
  readonly id: string
}

export const keyOf = (accountId: string, id: string): MediaKey => ({ accountId, id })

/** The key as one string, `<account>/<id>`: what the directory store names a file from (hashed), as it always has. */
export const keyText = (key: MediaKey): string => `${key.accountId}/${key.id}`
