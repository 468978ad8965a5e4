import type * as Calendar from "@leadline/core/metrics/Calendar"
import type * as SqlClient from "effect/sql/SqlClient"
import { textArray } from "./store.ts"

/**
 * Analytics counts rows between the instants core's `Calendar` computed (`Bounds`): the range
 * filter keeps to the `(account_id, <time>)` index, `width_bucket` numbers each row's bucket
 * (1 for the first), and `fill` zero-fills the buckets no row fell in.
 */
export const bucketsOf = (sql: SqlClient.SqlClient, bounds: Calendar.Bounds, column: string) => {
  const instants = bounds.map((at) => new Date(at).toISOString())
  return {
    inRange: sql`${sql(column)} >= ${instants[0]!}::timestamptz AND ${sql(column)} < ${instants[instants.length - 1]!}::timestamptz`,
    bucket: sql`width_bucket(${sql(column)}, ${textArray(instants)}::timestamptz[])`
  }
}

/** One value per bucket, from rows of `{bucket, value}` (`bucket` as `width_bucket` numbers it). */
export const fill = (
  bounds: Calendar.Bounds,
  rows: ReadonlyArray<{ readonly bucket: number; readonly value: number | string }>
): ReadonlyArray<number> => {
  const values = new Array<number>(Math.max(0, bounds.length - 1)).fill(0)
  for (const row of rows) if (row.bucket >= 1 && row.bucket <= values.length) values[row.bucket - 1] = Number(row.value)
  return values
}
