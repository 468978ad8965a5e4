import { Layer } from "effect"
import * as Slices from "./Slices.ts"
import * as SqlTransactor from "./SqlTransactor.ts"

/** Every core port over an `SqlClient` (PostgreSQL or PGlite: the same SQL); needs `Notifications`. */
export const layer = Layer.mergeAll(SqlTransactor.layer, ...Slices.all.map((slice) => slice.layer))
