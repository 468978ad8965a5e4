import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Schema } from "effect"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { StoreUnavailable } from "@leadline/core/Errors"
import { orDie } from "@leadline/sql-adapter/StoreErrors"

// How the SQL stores classify a failed statement: an unreachable database is a 503, anything else a 500.
const classify = (cause: unknown) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(orDie(Effect.fail(new SqlError({ reason: new UnknownError({ cause }) }))))
    assert.isTrue(Exit.isFailure(exit))
    const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
    return defect instanceof StoreUnavailable ? "unavailable" : "defect"
  })

describe("SQL failures", () => {
  it.effect("a server shutting down or starting up (SQLSTATE 57P01, 57P03, 08006) is the database being away", () =>
    Effect.gen(function* () {
      for (const code of ["57P01", "57P02", "57P03", "08006", "08001", "ECONNRESET", "ECONNREFUSED"]) {
        assert.strictEqual(yield* classify({ code }), "unavailable", code)
      }
    })
  )

  it.effect("anything else (a syntax error, a constraint, no code) is a defect", () =>
    Effect.gen(function* () {
      for (const cause of [{ code: "42601" }, { code: "23505" }, { code: "57014" }, new Error("boom")]) {
        assert.strictEqual(yield* classify(cause), "defect")
      }
    })
  )

  it.effect("a row that does not fit the Schema it is read with is a defect carrying the SchemaError", () =>
    Effect.gen(function* () {
      const row = Schema.decodeUnknownEffect(Schema.Struct({ created_at: Schema.Date }))({ created_at: "yesterday" })
      const exit = yield* Effect.exit(orDie(row))
      assert.isTrue(Exit.isFailure(exit))
      const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      assert.isTrue(Schema.isSchemaError(defect))
    })
  )
})
