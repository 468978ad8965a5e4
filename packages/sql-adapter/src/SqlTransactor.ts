import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { isSqlError } from "effect/sql/SqlError"
import { Transactor } from "@leadline/core/Transactor"
import { orDie } from "./internal/store.ts"

/** Set while a transaction of ours is open, so nested calls join it. */
const InTransaction = Context.Reference<boolean>("sql-adapter/InTransaction", { defaultValue: () => false })

/**
 * `sql.withTransaction`. A nested call joins the open transaction, as the port
 * promises, instead of opening a savepoint: two round trips fewer on every
 * idempotent create. BEGIN and COMMIT failures are the database's, so they
 * become defects like every other SQL failure (the ports never fail with `SqlError`).
 */
export const layer = Layer.effect(
  Transactor,
  Effect.map(SqlClient.SqlClient, (sql) =>
    Transactor.of({
      withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.flatMap(InTransaction, (open) =>
          open
            ? effect
            : (Effect.catchIf(
                sql.withTransaction(Effect.provideService(effect, InTransaction, true)),
                isSqlError,
                (error) => orDie(Effect.fail(error))
              ) as Effect.Effect<A, E, R>)
        )
    })
  )
)
