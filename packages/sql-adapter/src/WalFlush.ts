import { Deferred, Effect, Exit, Metric } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import type { SqlError } from "effect/sql/SqlError"

/**
 * Waits until PostgreSQL has flushed its WAL past every commit made before the call: for a unit
 * that committed without waiting for its flush (UnitOfWork.ts, `releaseLocksBeforeFlush`), so
 * that it answers only once what it answers is durable.
 *
 * A round is a transaction that writes one WAL record (a logical-decoding message, which touches
 * no table) and commits synchronously: PostgreSQL flushes the WAL through its commit record, so
 * through every commit before it. Callers share rounds (group commit, in the server): a caller
 * that finds none running runs one; while one runs, the first caller to come runs the next as
 * soon as it ends, and every later caller waits for that one. A caller that holds a connection
 * gives it (`own`): a round runs on its runner's connection, so it never queues for the pool
 * behind the requests waiting for it, and the callers that only wait give theirs back first.
 */
export const flushed = (sql: SqlClient.SqlClient, own?: Own): Effect.Effect<void, SqlError> =>
  Effect.suspend(() => {
    const state = stateOf(sql)
    const current = state.running
    if (current === undefined) return round(sql, state, Deferred.makeUnsafe(), own)
    if (state.following !== undefined) {
      return Effect.andThen(own?.release ?? Effect.void, Deferred.await(state.following))
    }
    const following = Deferred.makeUnsafe<void, SqlError>()
    state.following = following
    // Uninterruptible: the callers after this one wait for the round it runs.
    return Effect.uninterruptible(
      Effect.andThen(Effect.exit(Deferred.await(current)), round(sql, state, following, own))
    )
  })

/**
 * Whether rounds can run here: `probe` found that this role may write the round's record (a
 * managed PostgreSQL may not let it). Until probed, and where not, units commit as before.
 */
export const supported = (sql: SqlClient.SqlClient): boolean => stateOf(sql).supported

/** Asks PostgreSQL, once, as the database layer starts. */
export const probe = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError> =>
  // By name: PostgreSQL 17 (PGlite's) added a fourth argument with a default.
  sql<{ allowed: boolean | null }>`
    SELECT bool_or(has_function_privilege(p.oid, 'EXECUTE')) AS allowed FROM pg_catalog.pg_proc AS p
    WHERE p.proname = 'pg_logical_emit_message' AND p.pronamespace = 'pg_catalog'::regnamespace
      AND p.proargtypes[2] = 'text'::regtype`.pipe(
    Effect.flatMap(([row]) => {
      const allowed = row?.allowed === true
      stateOf(sql).supported = allowed
      return allowed
        ? Effect.void
        : Effect.logWarning(
            "This database role may not call pg_logical_emit_message: units commit with their flush as before, and orders for one product wait for each other's (docs/performance.md, \"A hot row's lock and the commit's flush\")"
          )
    })
  )

/** A caller's connection, and how it gives it back when it only waits. */
export interface Own {
  readonly connection: Connection
  readonly release: Effect.Effect<void>
}

export const rounds = Metric.counter("leadline_db_wal_flush_rounds_total", {
  description:
    "Flushes the server asked PostgreSQL for, for units that committed before their flush (an order's stock); the units waiting at once share one",
  incremental: true
})

/**
 * Which round runs and which is next. Only for sharing: a caller waits for a round that begins
 * after it came, or runs one, so a second round running alongside (a caller that came between
 * a round's end and the start of the next) costs a flush, never a commit left unflushed.
 */
interface State {
  supported: boolean
  running: Deferred.Deferred<void, SqlError> | undefined
  following: Deferred.Deferred<void, SqlError> | undefined
}

const byClient = new WeakMap<SqlClient.SqlClient, State>()

const stateOf = (sql: SqlClient.SqlClient): State => {
  let state = byClient.get(sql)
  if (state === undefined) {
    state = { supported: false, running: undefined, following: undefined }
    byClient.set(sql, state)
  }
  return state
}

const FLUSH = "SELECT pg_logical_emit_message(true, 'leadline.flush', '') IS NOT NULL AS written"

/**
 * One round, completing `done` for the callers waiting on it; it fails them when the statement
 * fails (the database away: they answer 503, as for any statement). Uninterruptible: other
 * requests wait for it, whatever becomes of the one running it.
 */
const round = (
  sql: SqlClient.SqlClient,
  state: State,
  done: Deferred.Deferred<void, SqlError>,
  own: Own | undefined
): Effect.Effect<void, SqlError> =>
  Effect.uninterruptible(
    Effect.suspend(() => {
      state.running = done
      if (state.following === done) state.following = undefined
      const flush = own === undefined ? sql.unsafe(FLUSH) : own.connection.execute(FLUSH, [], undefined)
      return Effect.exit(Effect.andThen(Metric.update(rounds, 1), flush)).pipe(
        Effect.flatMap((exit) => {
          if (state.running === done) state.running = undefined
          const result = Exit.asVoid(exit)
          return Effect.andThen(Deferred.done(done, result), result)
        })
      )
    })
  )
