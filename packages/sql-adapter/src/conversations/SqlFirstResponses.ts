import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { FirstResponses } from "@leadline/core/conversations/FirstResponses"
import { bucketsOf } from "../internal/buckets.ts"
import { orDie } from "../internal/store.ts"

/** The conversations keep their first inbound message and first answer (migration 0020): the stats read them. */
export const layer = Layer.effect(
  FirstResponses,
  Effect.map(SqlClient.SqlClient, (sql) =>
    FirstResponses.of({
      stats: (accountId, window) =>
        orDie(sql<{ count: number; avg: number | null; p50: number | null; p90: number | null }>`
          WITH answered AS (
            SELECT extract(epoch FROM (first_response_at - first_inbound_at))::float8 AS seconds FROM conversations
            WHERE account_id = ${accountId}::uuid AND ${bucketsOf(sql, window, "first_inbound_at").inRange}
              AND first_response_at IS NOT NULL
          )
          SELECT count(*)::int AS count, round(avg(seconds)::numeric)::int AS avg,
            round((percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds))::numeric)::int AS p50,
            round((percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds))::numeric)::int AS p90
          FROM answered`).pipe(Effect.map(([row]) => row ?? { count: 0, avg: null, p50: null, p90: null }))
    })
  )
)
