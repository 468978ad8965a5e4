import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Transactor } from "@leadline/core/Transactor"
import { withUnit } from "./UnitOfWork.ts"

/**
 * Core's unit of work on SQL (UnitOfWork.ts): a nested call joins the open unit, as the
 * port promises, and a unit whose writes all waited for its end commits them as one statement.
 */
export const layer = Layer.effect(
  Transactor,
  Effect.map(SqlClient.SqlClient, (sql) => Transactor.of({ withTransaction: (effect) => withUnit(sql, effect) }))
)
