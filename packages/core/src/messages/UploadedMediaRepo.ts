import { Context, type Effect } from "effect"
import type { UploadedMedia } from "./UploadedMedia.ts"

/** Graph's id for an uploaded media on one number, and when Graph gave it. */
export interface GraphUpload {
  readonly graphMediaId: string
  readonly uploadedAt: string
}

/**
 * The files an account uploaded to send (docs/contract-messaging.md §5.9): what each is (its bytes
 * are in `MediaStore`), and the id Graph gave it on each channel it was sent on, so that a file is
 * uploaded to Graph once per channel.
 */
export class UploadedMediaRepo extends Context.Service<
  UploadedMediaRepo,
  {
    readonly insert: (accountId: string, media: UploadedMedia) => Effect.Effect<void>
    readonly find: (accountId: string, id: string) => Effect.Effect<UploadedMedia | undefined>
    readonly graphUpload: (
      accountId: string,
      mediaId: string,
      channelId: string
    ) => Effect.Effect<GraphUpload | undefined>
    /** Remembers Graph's id of the file on the channel, replacing an older one. */
    readonly recordGraphUpload: (
      accountId: string,
      mediaId: string,
      channelId: string,
      upload: GraphUpload
    ) => Effect.Effect<void>
  }
>()("core/UploadedMediaRepo") {}
