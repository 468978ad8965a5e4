import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Logger } from "effect"
import { ConnectionError, SqlError, UniqueViolation, UnknownError } from "effect/sql/SqlError"
import { StoreUnavailable } from "@leadline/core/Errors"
import { orDie } from "@leadline/sql-adapter/StoreErrors"

/** A failure as @effect/sql-pg reports a server error or a socket error: the code on the cause. */
const failure = (code: string) =>
  new SqlError({
    reason: new UnknownError({ cause: Object.assign(new Error(`failure ${code}`), { code }), message: code })
  })

const defectOf = (error: SqlError) =>
  Effect.map(Effect.exit(orDie(Effect.fail(error))), (exit) => {
    assert.isTrue(Exit.isFailure(exit))
    const defect = Cause.findDefect((exit as Exit.Failure<never, never>).cause)
    assert.strictEqual(defect._tag, "Success")
    return defect._tag === "Success" ? defect.success : undefined
  })

const logged: Array<{ readonly level: string; readonly message: string }> = []
const captureLogs = Logger.layer([
  Logger.make(({ logLevel, message }) => {
    logged.push({ level: logLevel, message: (message as ReadonlyArray<unknown>).join(" ") })
  })
])

describe("SQL failures (internal/store orDie)", () => {
  it.effect("an unreachable database is StoreUnavailable (503): shutdown, startup, connection and socket codes", () =>
    Effect.gen(function* () {
      for (const code of [
        "57P01",
        "57P02",
        "57P03",
        "57P05",
        "08000",
        "08006",
        "08001",
        "ECONNREFUSED",
        "ECONNRESET"
      ]) {
        const defect = yield* defectOf(failure(code))
        assert.instanceOf(defect, StoreUnavailable, code)
      }
      const closed = new SqlError({ reason: new ConnectionError({ cause: new Error("Connection closed") }) })
      assert.instanceOf(yield* defectOf(closed), StoreUnavailable)
    }).pipe(Effect.provide(captureLogs))
  )

  it.effect("any other SQL failure stays a defect of its own (500), a cancelled statement (57014) included", () =>
    Effect.gen(function* () {
      for (const code of ["57014", "42P01", "22P02", "XX000"]) {
        const error = failure(code)
        assert.strictEqual(yield* defectOf(error), error, code)
      }
      const unique = new SqlError({
        reason: new UniqueViolation({ cause: new Error("duplicate"), constraint: "leads_pkey" })
      })
      assert.strictEqual(yield* defectOf(unique), unique)
    }).pipe(Effect.provide(captureLogs))
  )

  it.effect("logs an outage once at WARN when it starts and once when a later statement succeeds", () =>
    Effect.gen(function* () {
      // The first test left the database marked away: a success ends that outage first.
      yield* orDie(Effect.succeed(1))
      logged.length = 0

      for (let n = 0; n < 50; n++) yield* defectOf(failure("57P01"))
      yield* Effect.all(
        Array.from({ length: 20 }, () => defectOf(failure("ECONNREFUSED"))),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(logged, [
        {
          level: "Warn",
          message: "The database is unreachable (57P01); answering 503 service_unavailable until it returns"
        }
      ])
      assert.strictEqual(yield* orDie(Effect.succeed("ok")), "ok")
      assert.strictEqual(yield* orDie(Effect.succeed("ok")), "ok")
      assert.deepStrictEqual(logged.slice(1), [{ level: "Info", message: "The database is reachable again" }])

      // The next outage is logged again.
      yield* defectOf(failure("57P03"))
      assert.strictEqual(logged.length, 3)
      assert.strictEqual(logged[2]!.level, "Warn")
      yield* orDie(Effect.succeed(1))
      assert.strictEqual(logged.length, 4)
    }).pipe(Effect.provide(captureLogs))
  )

  it.live("a statement that began in an earlier outage does not end the current one by succeeding", () =>
    Effect.gen(function* () {
      yield* defectOf(failure("57P01"))
      logged.length = 0
      // Begins during outage 1 and succeeds only once outage 2 has begun: that proves nothing.
      const slow = yield* Effect.forkChild(orDie(Effect.andThen(Effect.sleep("30 millis"), Effect.succeed(1))))
      yield* Effect.yieldNow
      yield* orDie(Effect.succeed(1))
      yield* defectOf(failure("57P01"))
      assert.deepStrictEqual(
        logged.map((entry) => entry.level),
        ["Info", "Warn"]
      )
      yield* Fiber.join(slow)
      assert.strictEqual(logged.length, 2)
      // A statement begun during outage 2 ends it.
      yield* orDie(Effect.succeed(1))
      assert.deepStrictEqual(
        logged.map((entry) => entry.level),
        ["Info", "Warn", "Info"]
      )
    }).pipe(Effect.provide(captureLogs))
  )
})
