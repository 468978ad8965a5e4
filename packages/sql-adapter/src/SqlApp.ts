import { Layer } from "effect"
import type { MediaStore } from "@leadline/core/messages/MediaStore"
import * as Services from "@leadline/core/Services"
import * as Database from "./Database.ts"
import type * as Keyring from "./sealing/Keyring.ts"
import * as SealedSecrets from "./sealing/SealedSecrets.ts"
import * as SqlStores from "./SqlStores.ts"

export interface Config extends Database.Config {
  /** Seals provider secrets at rest (`LEADLINE_ENCRYPTION_KEY`); unset keeps them unsealed. */
  readonly keyring?: Keyring.Keyring | undefined
}

/**
 * The core services over SQL stores on the configured database, migrated at start; refuses to start
 * on sealed rows whose key the keyring does not hold. Inbound files are kept in the database
 * (`SqlMediaStore.ts`) unless `mediaStore` keeps them elsewhere (the server's directory, say).
 */
export const layer = <E = never>(config: Config, mediaStore?: Layer.Layer<MediaStore, E>) =>
  Services.layer.pipe(
    Layer.provideMerge(mediaStore === undefined ? SqlStores.layer : Layer.merge(SqlStores.layer, mediaStore)),
    Layer.provide(SealedSecrets.layer(config.keyring)),
    Layer.provideMerge(Database.layer(config))
  )
