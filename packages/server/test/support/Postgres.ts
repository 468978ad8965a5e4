import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

/** The PostgreSQL server tests may use, when `TEST_DATABASE_URL` names one. */
export const url = process.env.TEST_DATABASE_URL === "" ? undefined : process.env.TEST_DATABASE_URL

/** Runs statements on the test server (outside any Leadline process), returning the last one's rows. */
export const query = <A = Record<string, unknown>>(databaseUrl: string, ...statements: ReadonlyArray<string>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        let rows: ReadonlyArray<A> = []
        for (const statement of statements) rows = (yield* sql.unsafe(statement)) as ReadonlyArray<A>
        return rows
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 })))
    )
  )

/** A fresh schema on the test server, and a DATABASE_URL that puts a server in it. */
export const freshSchema = async (databaseUrl: string) => {
  const schema = `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await query(databaseUrl, `CREATE SCHEMA ${schema}`)
  const scoped = new URL(databaseUrl)
  scoped.searchParams.set("options", `-c search_path=${schema}`)
  return {
    schema,
    databaseUrl: scoped.toString(),
    drop: () => query(databaseUrl, `DROP SCHEMA ${schema} CASCADE`).then(() => undefined)
  }
}

/**
 * Takes `LOCK TABLE <table> IN <mode> MODE` in a transaction of its own, from
 * outside any Leadline process, and holds it until `release`: statements of a
 * server that need a conflicting lock wait meanwhile.
 */
export const holdLock = (databaseUrl: string, table: string, mode: string) =>
  new Promise<{ readonly release: () => Promise<void> }>((resolve, reject) => {
    let release = () => {}
    const released = new Promise<void>((done) => {
      release = done
    })
    const held: Promise<void> = Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql.withTransaction(
            Effect.gen(function* () {
              yield* sql.unsafe(`LOCK TABLE ${table} IN ${mode} MODE`)
              resolve({
                release: () => {
                  release()
                  return held
                }
              })
              yield* Effect.promise(() => released)
            })
          )
        }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 })))
      )
    )
    held.catch(reject)
  })

/** A transaction of the test's own on one connection, statement by statement, until `commit`. */
export interface Session {
  readonly run: <A = Record<string, unknown>>(statement: string) => Promise<ReadonlyArray<A>>
  readonly commit: () => Promise<void>
}

/**
 * Opens a transaction from outside any Leadline process and runs what the test sends it, in order,
 * so the test can stop between two statements while a server works. A failed statement rolls the
 * transaction back; `run` rejects with its error.
 */
export const openTransaction = (databaseUrl: string) =>
  new Promise<Session>((resolve, reject) => {
    type Step = {
      readonly statement: string | undefined
      readonly done: (rows: ReadonlyArray<any>) => void
      readonly fail: (error: unknown) => void
    }
    const steps: Array<Step> = []
    let wake: (() => void) | undefined
    const nextStep = () =>
      new Promise<Step>((take) => {
        const step = steps.shift()
        if (step !== undefined) return take(step)
        wake = () => {
          wake = undefined
          take(steps.shift()!)
        }
      })
    const send = (statement: string | undefined) =>
      new Promise<ReadonlyArray<any>>((done, fail) => {
        steps.push({ statement, done, fail })
        wake?.()
      })
    const ended = Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql.withTransaction(
            Effect.gen(function* () {
              resolve({
                run: (statement) => send(statement),
                commit: () => send(undefined).then(() => ended)
              })
              while (true) {
                const step = yield* Effect.promise(nextStep)
                if (step.statement === undefined) return step.done([])
                const result = yield* Effect.result(sql.unsafe(step.statement))
                if (result._tag === "Failure") {
                  step.fail(result.failure)
                  return yield* Effect.fail(result.failure)
                }
                step.done(result.success as ReadonlyArray<any>)
              }
            })
          )
        }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 })))
      )
    )
    ended.catch(reject)
  })
