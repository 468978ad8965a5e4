import { Effect, Exit, Layer, ManagedRuntime, Metric } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "@leadline/sql-adapter/Database"
import * as UnitOfWork from "@leadline/sql-adapter/UnitOfWork"
import * as TestDatabase from "../src/TestDatabase.ts"

/**
 * The SQL unit of work (sql-adapter/UnitOfWork.ts): writes behind, presumptions, and a unit that
 * ran no statement committed as one. On the test database (PostgreSQL with TEST_DATABASE_URL,
 * else PGlite); the HTTP behaviour built on it (idempotent creates) is the contract suites' on SQL.
 */

const database = await TestDatabase.make()
let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => runtime.runPromise(effect)
const sql = SqlClient.SqlClient
const unit = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.flatMap(sql, (client) => UnitOfWork.withUnit(client, effect))

const names = (table: string) =>
  Effect.flatMap(sql, (client) => client<{ name: string }>`SELECT name FROM ${client(table)} ORDER BY name`).pipe(
    Effect.map((rows) => rows.map((row) => row.name))
  )
const insert = (table: string, name: string) =>
  Effect.map(sql, (client) => client`INSERT INTO ${client(table)} (name) VALUES (${name})`)
const counter = (metric: Metric.Metric<number, Metric.CounterState<number>>) =>
  Effect.map(Metric.value(metric), (state) => Number(state.count))
const counts = Effect.all({
  oneStatement: counter(UnitOfWork.unitsEnded.one_statement),
  transaction: counter(UnitOfWork.unitsEnded.transaction),
  reruns: counter(UnitOfWork.unitReruns)
})
const delta = async <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => {
  const before = await run(counts)
  const exit = await runtime.runPromiseExit(effect)
  const after = await run(counts)
  return {
    exit,
    oneStatement: after.oneStatement - before.oneStatement,
    transaction: after.transaction - before.transaction,
    reruns: after.reruns - before.reruns
  }
}

let tables = 0
/** A fresh table with a unique `name`, for one test. */
const table = async () => {
  const name = `uow_${++tables}`
  await run(Effect.flatMap(sql, (client) => client`CREATE TABLE ${client(name)} (name text PRIMARY KEY)`))
  return name
}

beforeAll(async () => {
  runtime = ManagedRuntime.make(Database.layer(database.config).pipe(Layer.orDie))
}, 60_000)
afterAll(async () => {
  await runtime?.dispose()
  await database.dispose()
})

describe(`the SQL unit of work on ${database.label}`, () => {
  it("commits a unit of writes behind as one statement, with no transaction", async () => {
    const t = await table()
    const result = await delta(
      unit(
        Effect.gen(function* () {
          const client = yield* sql
          yield* UnitOfWork.writeBehind(client, yield* insert(t, "a"), yield* insert(t, "b"))
          yield* UnitOfWork.writeBehind(client, yield* insert(t, "c"))
          return "done"
        })
      )
    )
    expect(result.exit).toEqual(Exit.succeed("done"))
    expect(result).toMatchObject({ oneStatement: 1, transaction: 0, reruns: 0 })
    expect(await run(names(t))).toEqual(["a", "b", "c"])
  })

  it("runs the writes of one statement in the order they were made (the last holds its row locks the shortest)", async () => {
    const t = `uow_${++tables}`
    await run(
      Effect.flatMap(
        sql,
        (client) => client`CREATE TABLE ${client(t)} (name text PRIMARY KEY, n bigint GENERATED ALWAYS AS IDENTITY)`
      )
    )
    const result = await delta(
      unit(
        Effect.gen(function* () {
          const client = yield* sql
          yield* UnitOfWork.writeBehind(client, yield* insert(t, "first"), yield* insert(t, "second"))
          yield* UnitOfWork.writeBehind(client, yield* insert(t, "third"))
        })
      )
    )
    expect(result).toMatchObject({ oneStatement: 1, transaction: 0 })
    const order = await run(
      Effect.flatMap(sql, (client) => client<{ name: string }>`SELECT name FROM ${client(t)} ORDER BY n`)
    )
    expect(order.map((row) => row.name)).toEqual(["first", "second", "third"])
  })

  it("sends the writes behind before the unit's next statement, which sees them", async () => {
    const t = await table()
    const result = await delta(
      unit(
        Effect.gen(function* () {
          const client = yield* sql
          yield* UnitOfWork.writeBehind(client, yield* insert(t, "a"))
          const seen = yield* names(t)
          yield* UnitOfWork.writeBehind(client, yield* insert(t, "b"))
          return seen
        })
      )
    )
    expect(result.exit).toEqual(Exit.succeed(["a"]))
    expect(result).toMatchObject({ oneStatement: 0, transaction: 1, reruns: 0 })
    expect(await run(names(t))).toEqual(["a", "b"])
  })

  it("runs plain reads before the unit's writes without a transaction, and still commits as one statement", async () => {
    const t = await table()
    await run(unit(Effect.flatMap(insert(t, "a"), (statement) => statement)))
    const result = await delta(
      unit(
        Effect.gen(function* () {
          const seen = yield* UnitOfWork.read(names(t))
          yield* UnitOfWork.writeBehind(yield* sql, yield* insert(t, "b"))
          // After a write, a plain read is in the transaction, and sees the write.
          const after = yield* UnitOfWork.read(names(t))
          return { seen, after }
        })
      )
    )
    expect(result.exit).toEqual(Exit.succeed({ seen: ["a"], after: ["a", "b"] }))
    expect(result).toMatchObject({ transaction: 1, oneStatement: 0 })
    const readThenWrite = await delta(
      unit(
        Effect.gen(function* () {
          const seen = yield* UnitOfWork.read(names(t))
          yield* UnitOfWork.writeBehind(yield* sql, yield* insert(t, "c"))
          return seen
        })
      )
    )
    expect(readThenWrite.exit).toEqual(Exit.succeed(["a", "b"]))
    expect(readThenWrite).toMatchObject({ oneStatement: 1, transaction: 0 })
    expect(await run(names(t))).toEqual(["a", "b", "c"])
  })

  it("writes nothing when the unit fails, whether or not a statement ran", async () => {
    const t = await table()
    const behindOnly = await runtime.runPromiseExit(
      unit(
        Effect.gen(function* () {
          yield* UnitOfWork.writeBehind(yield* sql, yield* insert(t, "a"))
          return yield* Effect.fail("refused")
        })
      )
    )
    const afterARead = await runtime.runPromiseExit(
      unit(
        Effect.gen(function* () {
          yield* UnitOfWork.writeBehind(yield* sql, yield* insert(t, "b"))
          yield* names(t)
          return yield* Effect.fail("refused")
        })
      )
    )
    expect(behindOnly).toEqual(Exit.fail("refused"))
    expect(afterARead).toEqual(Exit.fail("refused"))
    expect(await run(names(t))).toEqual([])
    // The connection went back to the pool outside any transaction: the next unit commits.
    await run(unit(Effect.flatMap(insert(t, "c"), (statement) => statement)))
    expect(await run(names(t))).toEqual(["c"])
  })

  it("joins a nested unit to the open one", async () => {
    const t = await table()
    const exit = await runtime.runPromiseExit(
      unit(
        Effect.gen(function* () {
          yield* unit(Effect.flatMap(insert(t, "inner"), (statement) => statement))
          return yield* Effect.fail("outer refused")
        })
      )
    )
    expect(exit).toEqual(Exit.fail("outer refused"))
    expect(await run(names(t))).toEqual([])
  })

  /** What a presuming store does: presume the name free and answer "new", or ask and answer what it found. */
  const claim = (t: string, name: string) =>
    Effect.gen(function* () {
      const client = yield* sql
      if (yield* UnitOfWork.mayPresume) {
        yield* UnitOfWork.presume(yield* insert(t, name))
        return "new"
      }
      const taken =
        yield* client`INSERT INTO ${client(t)} (name) VALUES (${name}) ON CONFLICT DO NOTHING RETURNING name`
      return taken.length === 1 ? "new" : "taken"
    })

  /** `body` as a unit, and how many times it ran. */
  const counted = <A>(body: Effect.Effect<A, unknown, SqlClient.SqlClient>) => {
    const runs = { count: 0 }
    return {
      runs,
      effect: unit(
        Effect.andThen(
          Effect.sync(() => runs.count++),
          body
        )
      )
    }
  }

  it("keeps a presumption that held: one statement, one run", async () => {
    const t = await table()
    const { runs, effect } = counted(claim(t, "a"))
    const result = await delta(effect)
    expect(result.exit).toEqual(Exit.succeed("new"))
    expect(result).toMatchObject({ oneStatement: 1, reruns: 0 })
    expect(runs.count).toBe(1)
  })

  it("runs a unit again without presumptions when one was wrong, and answers what is true", async () => {
    const t = await table()
    await run(unit(claim(t, "a")))
    const { runs, effect } = counted(
      Effect.gen(function* () {
        const answer = yield* claim(t, "a")
        yield* UnitOfWork.writeBehind(yield* sql, yield* insert(t, `after-${answer}`))
        return answer
      })
    )
    const result = await delta(effect)
    expect(result.exit).toEqual(Exit.succeed("taken"))
    expect(result).toMatchObject({ reruns: 1, transaction: 1, oneStatement: 0 })
    expect(runs.count).toBe(2)
    // The first run's writes went nowhere: only the second run's.
    expect(await run(names(t))).toEqual(["a", "after-taken"])
  })

  it("checks a presumption before a statement that follows it, and reruns when it was wrong", async () => {
    const t = await table()
    await run(unit(claim(t, "a")))
    const { runs, effect } = counted(
      Effect.gen(function* () {
        const answer = yield* claim(t, "a")
        const seen = yield* names(t)
        return { answer, seen }
      })
    )
    const result = await delta(effect)
    expect(result.exit).toEqual(Exit.succeed({ answer: "taken", seen: ["a"] }))
    expect(result.reruns).toBe(1)
    expect(runs.count).toBe(2)
  })

  it("lets racing units presume the same thing: one commits it, the others rerun and find it", async () => {
    const t = await table()
    const answers = await run(
      Effect.all(
        Array.from({ length: 8 }, () => unit(claim(t, "same"))),
        { concurrency: 8 }
      )
    )
    expect(answers.filter((answer) => answer === "new")).toHaveLength(1)
    expect(answers.filter((answer) => answer === "taken")).toHaveLength(7)
    expect(await run(names(t))).toEqual(["same"])
  })

  it("fails a write behind that breaks a constraint, outside a presumption, without rerunning", async () => {
    const t = await table()
    await run(unit(claim(t, "a")))
    const { runs, effect } = counted(
      Effect.gen(function* () {
        yield* UnitOfWork.writeBehind(yield* sql, yield* insert(t, "a"))
      })
    )
    const result = await delta(effect)
    expect(Exit.isFailure(result.exit)).toBe(true)
    expect(result.reruns).toBe(0)
    expect(runs.count).toBe(1)
    expect(await run(names(t))).toEqual(["a"])
  })
})

