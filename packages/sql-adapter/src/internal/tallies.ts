import type * as Calendar from "@leadline/core/metrics/Calendar"
import { Effect } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { bucketsOf, fill } from "./buckets.ts"
import { orDie } from "./store.ts"

/**
 * Reads of `analytics_tallies` (migration 0020), which the slices' tables keep by trigger: a
 * metric per bucket, summed over its 15-minute slots and stripes. Bounds fall on slot edges
 * (every zone's offset is a multiple of 15 minutes), so a slot is wholly in one bucket.
 */
export const perBucket = (
  sql: SqlClient.SqlClient,
  accountId: string,
  metric: string,
  bounds: Calendar.Bounds
): Effect.Effect<ReadonlyArray<number>> => {
  const { bucket, inRange } = bucketsOf(sql, bounds, "slot")
  return orDie(sql<{ bucket: number; value: string }>`
    SELECT ${bucket} AS bucket, sum(value)::text AS value FROM analytics_tallies
    WHERE account_id = ${accountId}::uuid AND ${named(sql, metric)} AND ${inRange} GROUP BY 1`).pipe(
    Effect.map((rows) => fill(bounds, rows))
  )
}

/**
 * A metric by name, or every metric under a prefix ending in ":" (`leads_status:` sums the
 * statuses). The column is C-collated: the names that start with "x:" lie between "x:" and "x;".
 */
const named = (sql: SqlClient.SqlClient, metric: string) =>
  metric.endsWith(":") ? sql`metric >= ${metric} AND metric < ${`${metric.slice(0, -1)};`}` : sql`metric = ${metric}`

/** Every metric named `<prefix><suffix>` (the prefix ends in ":") summed over the window: suffix → total (metrics at zero left out). */
export const byPrefix = (
  sql: SqlClient.SqlClient,
  accountId: string,
  prefix: string,
  window: Calendar.Bounds
): Effect.Effect<ReadonlyMap<string, number>> =>
  orDie(sql<{ metric: string; value: string }>`
    SELECT metric, sum(value)::text AS value FROM analytics_tallies
    WHERE account_id = ${accountId}::uuid AND ${named(sql, prefix)}
      AND ${bucketsOf(sql, window, "slot").inRange}
    GROUP BY metric`).pipe(
    Effect.map(
      (rows) =>
        new Map(
          rows
            .filter((row) => Number(row.value) !== 0)
            .map((row) => [row.metric.slice(prefix.length), Number(row.value)])
        )
    )
  )
