import type { Layer } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as Migration from "./Migration.ts"
import type * as Notifications from "./Notifications.ts"

/**
 * What a resource brings to the SQL adapter: the layer of its stores (its core
 * ports over an `SqlClient`) and the migrations that make its tables, oldest
 * first. `Slices.ts` lists them; `SqlStores.ts` and the migration runner read
 * that list.
 */
export interface Slice<
  Name extends string = string,
  L extends Layer.Layer<never, never, SqlClient.SqlClient | Notifications.Notifications> = Layer.Layer<
    never,
    never,
    SqlClient.SqlClient | Notifications.Notifications
  >
> {
  readonly name: Name
  readonly layer: L
  readonly migrations: ReadonlyArray<Migration.Migration>
}

export const make = <
  const Name extends string,
  L extends Layer.Layer<never, never, SqlClient.SqlClient | Notifications.Notifications>
>(
  slice: Slice<Name, L>
): Slice<Name, L> => slice
