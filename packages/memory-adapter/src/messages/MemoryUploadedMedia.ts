import { Effect, Layer } from "effect"
import type { UploadedMedia } from "@leadline/core/messages/UploadedMedia"
import { type GraphUpload, UploadedMediaRepo } from "@leadline/core/messages/UploadedMediaRepo"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly media: UploadedMedia
}

interface Upload extends GraphUpload {
  readonly accountId: string
  readonly mediaId: string
  readonly channelId: string
}

/** Uploaded files' records (their bytes are in the media store) and Graph's id of each per channel. */
export const layer = Layer.sync(UploadedMediaRepo)(() => {
  const media = MemoryTable.make({ primaryKey: (row: Row) => MemoryTable.key(row.accountId, row.media.id) })
  const uploads = MemoryTable.make({
    primaryKey: (row: Upload) => MemoryTable.key(row.accountId, row.mediaId, row.channelId)
  })
  return UploadedMediaRepo.of({
    insert: (accountId, uploaded) => atomically((tx) => void media.insert(tx, { accountId, media: uploaded })),
    find: (accountId, id) => Effect.sync(() => media.get(MemoryTable.key(accountId, id))?.media),
    graphUpload: (accountId, mediaId, channelId) =>
      Effect.sync(() => {
        const row = uploads.get(MemoryTable.key(accountId, mediaId, channelId))
        return row === undefined ? undefined : { graphMediaId: row.graphMediaId, uploadedAt: row.uploadedAt }
      }),
    recordGraphUpload: (accountId, mediaId, channelId, upload) =>
      atomically((tx) => {
        const row = { accountId, mediaId, channelId, ...upload }
        if (uploads.get(MemoryTable.key(accountId, mediaId, channelId)) === undefined) uploads.insert(tx, row)
        else uploads.update(tx, row)
      })
  })
})
