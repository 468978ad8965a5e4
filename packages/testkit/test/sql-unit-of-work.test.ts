import { Effect, Exit, Layer, ManagedRuntime, Metric, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "@leadline/sql-adapter/Database"
import * as UnitOfWork from "@leadline/sql-adapter/UnitOfWork"
import * as WalFlush from "@leadline/sql-adapter/WalFlush"
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

describe(`what a unit runs after its commit, on ${database.label}`, () => {
  /** How many rows of `t` another statement sees when `afterCommit` runs: what had committed by then. */
  const seenAfter = (t: string, seen: Array<number>) =>
    Effect.flatMap(sql, (client) =>
      UnitOfWork.afterCommit(
        Effect.orDie(
          Effect.map(client<{ n: number }>`SELECT count(*)::int AS n FROM ${client(t)}`, ([row]) => {
            seen.push(row!.n)
          })
        )
      )
    )

  it("runs `afterCommit` once the unit's writes are committed, as one statement or as a transaction", async () => {
    const t = await table()
    const seen: Array<number> = []
    const alone = await delta(
      unit(
        Effect.gen(function* () {
          yield* UnitOfWork.writeBehind(yield* sql, yield* insert(t, "a"))
          yield* seenAfter(t, seen)
          expect(seen).toEqual([])
        })
      )
    )
    expect(alone).toMatchObject({ oneStatement: 1, transaction: 0 })
    const transaction = await delta(
      unit(
        Effect.gen(function* () {
          yield* UnitOfWork.writeBehind(yield* sql, yield* insert(t, "b"))
          yield* seenAfter(t, seen)
          yield* names(t)
        })
      )
    )
    expect(transaction).toMatchObject({ oneStatement: 0, transaction: 1 })
    expect(seen).toEqual([1, 2])
  })

  it("does not run `afterCommit` when the unit fails, nor what a rerun left behind", async () => {
    const t = await table()
    await run(unit(Effect.flatMap(insert(t, "taken"), (statement) => statement)))
    const seen: Array<number> = []
    const failed = await runtime.runPromiseExit(
      unit(
        Effect.gen(function* () {
          yield* UnitOfWork.writeBehind(yield* sql, yield* insert(t, "a"))
          yield* seenAfter(t, seen)
          return yield* Effect.fail("refused")
        })
      )
    )
    expect(failed).toEqual(Exit.fail("refused"))
    // A presumption that fails: the first run's afterCommit is dropped with it; the rerun's runs once.
    const rerun = await delta(
      unit(
        Effect.gen(function* () {
          const client = yield* sql
          yield* seenAfter(t, seen)
          if (yield* UnitOfWork.mayPresume) yield* UnitOfWork.presume(yield* insert(t, "taken"))
          else yield* UnitOfWork.writeBehind(client, yield* insert(t, "c"))
        })
      )
    )
    expect(rerun).toMatchObject({ reruns: 1 })
    expect(seen).toEqual([2])
    expect(await run(names(t))).toEqual(["c", "taken"])
  })

  it("signals a write behind's writing after the commit, only when it wrote a row, alone or fused with others", async () => {
    const t = await table()
    const signalled: Array<string> = []
    const signal = (name: string) => Effect.sync(() => void signalled.push(name))
    const returning = (name: string) =>
      Effect.map(
        sql,
        (client) => client`INSERT INTO ${client(t)} (name) SELECT ${name} WHERE ${name} <> 'none' RETURNING 1`
      )
    await run(
      unit(
        Effect.gen(function* () {
          const client = yield* sql
          yield* UnitOfWork.writeBehind(client, new UnitOfWork.Signalling(yield* returning("alone"), signal("alone")))
          expect(signalled).toEqual([])
        })
      )
    )
    await run(
      unit(
        Effect.gen(function* () {
          const client = yield* sql
          yield* UnitOfWork.writeBehind(
            client,
            yield* insert(t, "plain"),
            new UnitOfWork.Signalling(yield* returning("none"), signal("none")),
            new UnitOfWork.Signalling(yield* returning("fused"), signal("fused"))
          )
        })
      )
    )
    // Sent before a statement that follows, inside a transaction: signalled at its commit.
    await run(
      unit(
        Effect.gen(function* () {
          const client = yield* sql
          yield* UnitOfWork.writeBehind(client, new UnitOfWork.Signalling(yield* returning("early"), signal("early")))
          yield* names(t)
          expect(signalled).toEqual(["alone", "fused"])
        })
      )
    )
    // Outside a unit: the write commits on its own, and signals at once.
    await run(
      Effect.gen(function* () {
        yield* UnitOfWork.writeBehind(
          yield* sql,
          new UnitOfWork.Signalling(yield* returning("outside"), signal("outside"))
        )
      })
    )
    expect(signalled).toEqual(["alone", "fused", "early", "outside"])
    expect(await run(names(t))).toEqual(["alone", "early", "fused", "outside", "plain"])
  })
})

describe(`a unit that releases its locks before its commit's flush, on ${database.label}`, () => {
  const flushRounds = () => run(counter(WalFlush.rounds))
  /** A table whose rows record the commit setting of the transaction that wrote them and the WAL position then. */
  const recorded = async () => {
    const t = `uow_${++tables}`
    await run(
      Effect.flatMap(
        sql,
        (client) => client`CREATE TABLE ${client(t)} (name text PRIMARY KEY, setting text, lsn pg_lsn)`
      )
    )
    return t
  }
  const record = (t: string, name: string) =>
    Effect.map(
      sql,
      (client) => client`INSERT INTO ${client(t)} (name, setting, lsn)
                         VALUES (${name}, current_setting('synchronous_commit'), pg_current_wal_insert_lsn())`
    )
  const rows = (t: string) =>
    run(
      Effect.flatMap(
        sql,
        (client) => client<{ name: string; setting: string; flushed: boolean }>`
          SELECT name, setting, pg_current_wal_flush_lsn() >= lsn AS flushed FROM ${client(t)} ORDER BY name`
      )
    )
  const setting = () =>
    run(
      Effect.flatMap(
        sql,
        (client) => client<{ setting: string }>`SELECT current_setting('synchronous_commit') AS setting`
      )
    ).then(([row]) => row!.setting)

  it("runs flush rounds here: the database layer asked PostgreSQL whether this role may write their record", async () => {
    expect(await run(Effect.map(sql, WalFlush.supported))).toBe(true)
  })

  it("commits its one statement without waiting for the flush, and ends once a flush round covered it", async () => {
    const t = await recorded()
    const before = await flushRounds()
    const result = await delta(
      unit(
        Effect.gen(function* () {
          yield* UnitOfWork.releaseLocksBeforeFlush
          yield* UnitOfWork.writeBehind(yield* sql, yield* record(t, "early"))
          return "done"
        })
      )
    )
    expect(result.exit).toEqual(Exit.succeed("done"))
    expect(result).toMatchObject({ oneStatement: 1, transaction: 0, reruns: 0 })
    expect(await flushRounds()).toBe(before + 1)
    expect(await rows(t)).toEqual([{ name: "early", setting: "off", flushed: true }])
    // The setting held for that transaction only.
    expect(await setting()).toBe("on")
  })

  it("commits as before once it became a transaction, and runs no flush round", async () => {
    const t = await recorded()
    const before = await flushRounds()
    const result = await delta(
      unit(
        Effect.gen(function* () {
          yield* UnitOfWork.releaseLocksBeforeFlush
          yield* yield* record(t, "first")
          yield* UnitOfWork.writeBehind(yield* sql, yield* record(t, "second"))
        })
      )
    )
    expect(result).toMatchObject({ oneStatement: 0, transaction: 1 })
    expect(await flushRounds()).toBe(before)
    expect((await rows(t)).map((row) => row.setting)).toEqual(["on", "on"])
  })

  it("waits for a flush round when a store asks (a replayed answer), committing as usual", async () => {
    const t = await recorded()
    const before = await flushRounds()
    await run(
      unit(
        Effect.gen(function* () {
          yield* UnitOfWork.awaitFlush
          yield* UnitOfWork.writeBehind(yield* sql, yield* record(t, "replayed"))
        })
      )
    )
    expect(await flushRounds()).toBe(before + 1)
    expect(await rows(t)).toEqual([{ name: "replayed", setting: "on", flushed: true }])
  })

  it("shares one flush among the callers waiting at once, and flushes past what was written before", async () => {
    const [{ lsn }] = (await run(
      Effect.flatMap(sql, (client) => client<{ lsn: string }>`SELECT pg_current_wal_insert_lsn()::text AS lsn`)
    )) as [{ lsn: string }]
    const before = await flushRounds()
    await run(
      Effect.flatMap(sql, (client) =>
        Effect.all(
          Array.from({ length: 20 }, () => WalFlush.flushed(client)),
          { concurrency: 20 }
        )
      )
    )
    // The first caller's round, and one more for those that came while it ran.
    expect(await flushRounds()).toBe(before + 2)
    const [{ flushed }] = (await run(
      Effect.flatMap(
        sql,
        (client) => client<{ flushed: boolean }>`SELECT pg_current_wal_flush_lsn() >= ${lsn}::pg_lsn AS flushed`
      )
    )) as [{ flushed: boolean }]
    expect(flushed).toBe(true)
  })

  it("runs a round on the connection of the caller that runs it; the callers that only wait give theirs back", async () => {
    const released: Array<number> = []
    const ran: Array<number> = []
    const before = await flushRounds()
    await run(
      Effect.flatMap(sql, (client) => {
        const own = (i: number): WalFlush.Own => ({
          // A connection that says which caller's ran the round.
          connection: {
            execute: (text: string) =>
              Effect.andThen(
                Effect.sync(() => ran.push(i)),
                client.unsafe(text)
              )
          } as unknown as WalFlush.Own["connection"],
          release: Effect.sync(() => void released.push(i))
        })
        return Effect.all(
          Array.from({ length: 6 }, (_, i) => WalFlush.flushed(client, own(i))),
          { concurrency: 6 }
        )
      })
    )
    // The first ran a round at once, the second the one after; the other four waited for that one.
    expect(await flushRounds()).toBe(before + 2)
    expect(ran).toEqual([0, 1])
    expect(released.sort()).toEqual([2, 3, 4, 5])
  })

  // Only a server has roles: where TEST_DATABASE_URL names one.
  const serverUrl = process.env.TEST_DATABASE_URL
  if (database.kind === "postgres" && serverUrl !== undefined)
    it("commits as before where the role may not write a round's record, and runs no round", async () => {
      const name = `ll_noflush_${crypto.randomUUID().slice(0, 8)}`
      const inDatabase = new URL(serverUrl)
      inDatabase.pathname = `/${name}`
      const asRole = new URL(inDatabase)
      asRole.username = name
      asRole.password = ""
      await TestDatabase.adminQuery(serverUrl, `CREATE ROLE ${name} LOGIN`)
      await TestDatabase.adminQuery(serverUrl, `CREATE DATABASE ${name} OWNER ${name}`)
      const restricted = ManagedRuntime.make(
        Database.client({ url: Redacted.make(asRole.toString()), dataDir: Database.MEMORY }).pipe(Layer.orDie)
      )
      try {
        await TestDatabase.adminQuery(
          inDatabase.toString(),
          "REVOKE EXECUTE ON FUNCTION pg_catalog.pg_logical_emit_message(boolean, text, text) FROM PUBLIC"
        )
        const before = await flushRounds()
        const [supported, rows] = await restricted.runPromise(
          Effect.gen(function* () {
            const client = yield* sql
            yield* WalFlush.probe(client)
            yield* client`CREATE TABLE recorded (name text PRIMARY KEY, setting text)`
            yield* UnitOfWork.withUnit(
              client,
              Effect.gen(function* () {
                yield* UnitOfWork.releaseLocksBeforeFlush
                yield* UnitOfWork.writeBehind(
                  client,
                  client`INSERT INTO recorded VALUES ('refused', current_setting('synchronous_commit'))`
                )
              })
            )
            return [
              WalFlush.supported(client),
              yield* client<{ name: string; setting: string }>`SELECT name, setting FROM recorded`
            ] as const
          })
        )
        expect(supported).toBe(false)
        expect(rows).toEqual([{ name: "refused", setting: "on" }])
        expect(await flushRounds()).toBe(before)
      } finally {
        await restricted.dispose()
        await TestDatabase.adminQuery(serverUrl, `DROP DATABASE ${name} WITH (FORCE)`)
        await TestDatabase.adminQuery(serverUrl, `DROP ROLE ${name}`)
      }
    })
})
