import { Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { StoreUnavailable } from "@leadline/core/Errors"

const SOCKET_ERRORS = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND"])

// SQLSTATE classes of a server that is going away or not yet there: 08 connection
// exception, 57P operator intervention (admin_shutdown, crash_shutdown, cannot_connect_now).
const UNAVAILABLE_SQLSTATE = /^(08|57P)/

const isUnreachable = (error: SqlError): boolean => {
  const reason = error.reason
  if (reason._tag === "ConnectionError") return true
  // Socket-level and shutdown failures can reach us as unknown errors: recognised by their code, never their text.
  const code = (reason.cause as { code?: unknown } | undefined)?.code
  return typeof code === "string" && (SOCKET_ERRORS.has(code) || UNAVAILABLE_SQLSTATE.test(code))
}

/**
 * SQL failures are not the caller's doing: they become defects (500), except an
 * unreachable database, which becomes `StoreUnavailable` (503).
 */
export const orDie = <A, R>(effect: Effect.Effect<A, SqlError, R>): Effect.Effect<A, never, R> =>
  Effect.catch(effect, (error) =>
    Effect.die(isUnreachable(error) ? new StoreUnavailable({ message: "The database is unreachable" }) : error)
  )

export const iso = (value: unknown): string =>
  value instanceof Date ? value.toISOString() : new Date(value as string).toISOString()

export const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : iso(value))

export const json = <A>(value: unknown): A => (typeof value === "string" ? JSON.parse(value) : value) as A

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Ids in uuid columns: anything else names nothing, and PostgreSQL would refuse the cast. */
export const isUuid = (value: string): boolean => UUID.test(value)
