import { Layer } from "effect"
import type { MediaStore } from "@leadline/core/messages/MediaStore"
import * as Services from "@leadline/core/Services"
import * as Database from "./Database.ts"
import * as SqlStores from "./SqlStores.ts"

/**
 * The core services over SQL stores on the configured database, migrated at start. Inbound files
 * are kept in the database (`SqlMediaStore.ts`) unless `mediaStore` keeps them elsewhere (the
 * server's directory, say).
 */
export const layer = <E = never>(config: Database.Config, mediaStore?: Layer.Layer<MediaStore, E>) =>
  Services.layer.pipe(
    Layer.provideMerge(mediaStore === undefined ? SqlStores.layer : Layer.merge(SqlStores.layer, mediaStore)),
    Layer.provideMerge(Database.layer(config))
  )
