import { Layer } from "effect"
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
 * on sealed rows whose key the keyring does not hold.
 */
export const layer = (config: Config) =>
  Services.layer.pipe(
    Layer.provideMerge(SqlStores.layer),
    Layer.provide(SealedSecrets.layer(config.keyring)),
    Layer.provideMerge(Database.layer(config))
  )
