import * as PgClient from "@effect/sql-pg/PgClient"
import * as PgConnection from "@effect/sql-pg/PgConnection"
import * as PgPool from "@effect/sql-pg/PgPool"
import { Context, Effect, Layer, Scope, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import * as FifoGate from "./internal/FifoGate.ts"
import * as Notifications from "./Notifications.ts"

/**
 * The SQL client for a PostgreSQL server: `@effect/sql-pg`'s sessions and pool, with two
 * changes to how connections are handed out (docs/performance.md, "A fair pool"):
 *
 * - every checkout passes a first-in, first-out gate with as many permits as the pool has
 *   connections, so under a full pool requests are served in the order they asked;
 * - LISTEN runs on one session of its own, opened on first use, for every channel, instead
 *   of holding one pooled connection per channel for the life of the process; the
 *   announcements after commits (Notifications.ts) are sent there too.
 *
 * The statements, their compiler and the transaction protocol are sql-pg's.
 */
export const make = Effect.fnUntraced(function* (config: PgClient.PgPoolConfig) {
  const pool = yield* PgPool.make(config)
  const gate = FifoGate.make(config.maxConnections ?? 10)

  const checkout = Effect.andThen(gate.scoped, pool.get)
  const reserve = Effect.andThen(gate.scoped, pool.reserve)

  const client = yield* SqlClient.make({
    acquirer: Effect.map(checkout, (session) => toConnection(session)),
    borrower: (f) => gate.withPermit(pool.use((session) => f(toConnection(session)))),
    transactionAcquirer: Effect.map(reserve, (session) => toConnection(session)),
    compiler: PgClient.makeCompiler(),
    driver: "pg",
    prepareTransactionControls: true,
    commit,
    releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`,
    spanAttributes: [
      ["db.system.name", "postgresql"],
      ["db.namespace", config.database ?? config.username ?? "postgres"]
    ]
  })

  // One session for every channel, opened by the first LISTEN; a LISTEN that cannot open it leaves the
  // next one to try again. A failure ends that channel's wake-ups, and the workers' polling carries on.
  const scope = yield* Effect.scope
  const opening = FifoGate.make(1)
  let session: PgConnection.PgConnection | undefined
  const listener = opening.withPermit(
    Effect.suspend(() =>
      session !== undefined
        ? Effect.succeed(session)
        : Effect.tap(
            Scope.provide(
              Effect.flatMap(PgConnection.make(config), (opened) => opened.pin),
              scope
            ),
            (opened) =>
              Effect.sync(() => {
                session = opened
              })
          )
    )
  )
  const notifications = yield* Notifications.fromQueues(
    (channel) => Effect.flatMap(listener, (session) => session.listen(channel)),
    // On the listening session, outside the pool: a wake-up never queues behind the requests. It
    // commits without waiting for its flush: it wrote nothing that must survive a crash.
    (channels) =>
      Effect.flatMap(listener, (session) =>
        session.query(
          `SELECT set_config('synchronous_commit', 'off', true), ${channels.map((_, i) => `pg_notify($${i + 1}, '')`).join(", ")}`,
          channels
        )
      ),
    // Sent from the listening session itself: its process woke its listeners when it announced.
    (notification) => session !== undefined && notification.processId === session.processId
  )
  return { client, notifications }
})

export const layer = (config: PgClient.PgPoolConfig) =>
  Layer.effectContext(
    Effect.map(make(config), ({ client, notifications }) =>
      Context.make(SqlClient.SqlClient, client).pipe(Context.add(Notifications.Notifications, notifications))
    )
  ).pipe(Layer.provide(Reactivity.layer))

/** PostgreSQL answers `ROLLBACK` to the COMMIT of an aborted transaction: that is a failure. */
const commit = (connection: Connection): Effect.Effect<void, SqlError> =>
  Effect.flatMap(connection.executeRaw("COMMIT", []) as Effect.Effect<PgConnection.Result, SqlError>, (result) =>
    result.command === "ROLLBACK"
      ? Effect.fail(
          new SqlError({
            reason: new UnknownError({
              cause: new Error("COMMIT rolled back an aborted transaction"),
              message: "COMMIT rolled back an aborted transaction",
              operation: "commit"
            })
          })
        )
      : Effect.void
  )

const toConnection = (session: PgConnection.PgConnection): Connection => {
  const rows = (sql: string, params: ReadonlyArray<unknown>, prepare = true) =>
    Effect.map(session.query(sql, params, prepare), (result) => result.rows)
  const transformed = (
    effect: Effect.Effect<ReadonlyArray<any>, SqlError>,
    transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ) => (transformRows === undefined ? effect : Effect.map(effect, transformRows))
  return {
    execute: (sql, params, transformRows) => transformed(rows(sql, params), transformRows),
    executeRaw: (sql, params) => session.query(sql, params),
    executeValues: (sql, params) => session.queryValues(sql, params),
    executeValuesUnprepared: (sql, params) => session.queryValues(sql, params, false),
    executeUnprepared: (sql, params, transformRows) => transformed(rows(sql, params, false), transformRows),
    executeStream: (sql, params, transformRows) => {
      const stream = session.stream(sql, params)
      return transformRows === undefined ? stream : Stream.mapArray(stream, (batch) => transformRows(batch) as any)
    }
  }
}
