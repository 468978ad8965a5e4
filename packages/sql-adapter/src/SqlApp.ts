import { Layer } from "effect"
import * as Services from "@leadline/core/Services"
import * as Database from "./Database.ts"
import * as SqlStores from "./SqlStores.ts"

/** The core services over SQL stores on the configured database, migrated at start. */
export const layer = (config: Database.Config) =>
  Services.layer.pipe(Layer.provideMerge(SqlStores.layer), Layer.provideMerge(Database.layer(config)))
