import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { PGlite } from "@electric-sql/pglite"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Context, Effect, Layer, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import { ConnectionError, SqlError, UniqueViolation, UnknownError } from "effect/sql/SqlError"
import * as FifoGate from "./internal/FifoGate.ts"
import * as PgliteTemplate from "./PgliteTemplate.ts"

/**
 * An `SqlClient` over an in-process PGlite database. PGlite is one session, so
 * a lease on the connection is a lock on it: a transaction holds the lock from
 * BEGIN to COMMIT and no other fiber's statement can slip into it.
 *
 * It uses the PostgreSQL statement compiler of `@effect/sql-pg`, so every query
 * written for the server runs here unchanged.
 */

const toSqlError = (operation: string) => (cause: unknown) => {
  const error = cause as { readonly code?: string; readonly constraint?: string; readonly message?: string }
  const props = { cause, message: error?.message ?? String(cause), operation }
  if (error?.code === "23505")
    return new SqlError({ reason: new UniqueViolation({ ...props, constraint: error.constraint ?? "unknown" }) })
  if (error?.code?.startsWith("08")) return new SqlError({ reason: new ConnectionError(props) })
  return new SqlError({ reason: new UnknownError(props) })
}

/**
 * PostgreSQL's own default of 128 MB of shared buffers is memory the embedded server touches and
 * keeps (its WebAssembly memory never shrinks); 16 MB cut the resident set of a server on an
 * existing database from about 420 MB to 280 MB, at the same speed in `bench/` (docs/performance.md, "Memory").
 */
const SETTINGS = "shared_buffers = 16MB"

/**
 * `template`: what a new database starts from (`sql-adapter/src/PgliteTemplate.ts`): `migrated` for a
 * database the migrations will run on, `initdb` (PostgreSQL's empty database) for a bare client.
 */
export const make = Effect.fnUntraced(function* (
  dataDir: string | undefined,
  template: PgliteTemplate.Kind = "initdb"
) {
  const db = yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: () => {
        // The folders above the database's own; that one is unpacked from a template, or PGlite makes it.
        if (dataDir !== undefined) {
          mkdirSync(dirname(dataDir), { recursive: true })
          PgliteTemplate.unpack(dataDir, template)
        }
        const from = PgliteTemplate.forNewDatabase(dataDir, template)
        return PGlite.create(dataDir ?? "memory://", {
          postgresqlconf: SETTINGS,
          ...(from === undefined ? {} : { loadDataDir: from })
        })
      },
      catch: toSqlError("open")
    }),
    (db) => Effect.promise(() => db.close())
  )
  // One session: a lease is the lock on it, handed over in the order fibers asked for it.
  const lock = FifoGate.make(1)

  const query = (sql: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array") =>
    Effect.tryPromise({
      try: () => db.query<any>(sql, params as Array<unknown>, { rowMode }),
      catch: toSqlError("execute")
    })

  const rows = (
    sql: string,
    params: ReadonlyArray<unknown>,
    transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ) => Effect.map(query(sql, params, "object"), (result) => (transformRows ? transformRows(result.rows) : result.rows))

  const values = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.map(query(sql, params, "array"), (result) => result.rows as ReadonlyArray<ReadonlyArray<unknown>>)

  const connection: Connection = {
    execute: rows,
    executeRaw: (sql, params) => query(sql, params, "object"),
    executeStream: (sql, params, transformRows) => Stream.fromIterableEffect(rows(sql, params, transformRows)),
    executeValues: values,
    executeValuesUnprepared: values,
    executeUnprepared: rows
  }

  const acquirer = Effect.as(lock.scoped, connection)

  const client = yield* SqlClient.make({
    acquirer,
    transactionAcquirer: acquirer,
    compiler: PgClient.makeCompiler(),
    driver: "pglite",
    spanAttributes: [["db.system.name", "postgresql"]]
  })
  return { client, db }
})

/** The raw PGlite handle, for what SQL cannot say (LISTEN callbacks, closing). */
export class Pglite extends Context.Service<Pglite, PGlite>()("sql-adapter/Pglite") {}

export const layer = (dataDir: string | undefined, template: PgliteTemplate.Kind = "initdb") =>
  Layer.effectContext(
    Effect.map(make(dataDir, template), ({ client, db }) =>
      Context.make(SqlClient.SqlClient, client).pipe(Context.add(Pglite, db))
    )
  ).pipe(Layer.provide(Reactivity.layer))
