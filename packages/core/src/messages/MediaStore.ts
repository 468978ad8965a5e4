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
    readonly put: <E>(key: string, contentType: string, bytes: Stream.Stream<Uint8Array, E>) => Effect.Effect<number, E>
    readonly get: (key: string) => Effect.Effect<StoredMedia | undefined>
    readonly remove: (key: string) => Effect.Effect<void>
  }
>()("core/MediaStore") {}

/** A message's file's key: its account and its id (ids are unique per account only). */
export const keyOf = (accountId: string, messageId: string): string => `${accountId}/${messageId}`
