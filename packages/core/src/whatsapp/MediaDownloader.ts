import { Context, type Effect, type Redacted, Schema, type Stream } from "effect"

/** Where a download failed, and what it means for the file (docs/contract-messaging.md §5.8). */
export class MediaFailure extends Schema.TaggedError<MediaFailure>()("MediaFailure", {
  /**
   * `gone`: WhatsApp no longer has the file (expired or unknown id), it never will again;
   * `retryable`: rate limits, 5xx, a connection that failed, worth another try later;
   * `rejected`: any other refusal (a token refused, a bad request): not retried.
   */
  kind: Schema.Literals(["gone", "retryable", "rejected"]),
  message: Schema.String
}) {}

/** What the provider says of a file before its bytes, and the bytes, fetched when the stream is run. */
export interface Download {
  readonly mimeType: string | null
  readonly sha256: string | null
  readonly fileSize: number | null
  /** Pulled from the provider as the consumer reads: never held whole. */
  readonly bytes: Stream.Stream<Uint8Array, MediaFailure>
}

/**
 * The inbound side's file fetch (docs/contract-messaging.md §5.8): Graph's two steps (the media
 * id's URL, then its bytes, both with the channel's token) in the Cloud API adapter, the
 * simulator's own files offline. One attempt per call: the fetcher decides about retries.
 */
export class MediaDownloader extends Context.Service<
  MediaDownloader,
  {
    readonly download: (
      channel: { readonly phoneNumberId: string; readonly accessToken: Redacted.Redacted<string> },
      mediaId: string
    ) => Effect.Effect<Download, MediaFailure>
  }
>()("core/MediaDownloader") {}
