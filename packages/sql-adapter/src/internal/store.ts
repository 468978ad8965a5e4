import { Effect, Schema, SchemaTransformation } from "effect"
import { isSqlError, type SqlError } from "effect/sql/SqlError"
import { StoreUnavailable } from "@leadline/core/Errors"

const SOCKET_ERRORS = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND"])

const codeOf = (error: SqlError): string | undefined => {
  const code = (error.reason.cause as { code?: unknown } | undefined)?.code
  return typeof code === "string" ? code : undefined
}

/**
 * Recognised by error codes, never by text: a connection error, a socket
 * failure, SQLSTATE class 08 (connection exception) or 57P (the server is
 * shutting down, crashed, or still starting: 57P01 admin_shutdown, 57P02
 * crash_shutdown, 57P03 cannot_connect_now). Class 57's 57014 (a cancelled
 * statement) is not an outage.
 */
const isUnreachable = (error: SqlError): boolean => {
  if (error.reason._tag === "ConnectionError") return true
  const code = codeOf(error)
  return code !== undefined && (SOCKET_ERRORS.has(code) || code.startsWith("08") || code.startsWith("57P"))
}

/**
 * Whether the database is currently taken to be away, and which outage this is:
 * an outage is logged once when it starts and once when it ends, not once per
 * statement (a short outage under load fails thousands of them).
 */
let away = false
let outage = 0

const wentAway = (error: SqlError) =>
  Effect.suspend(() => {
    if (away) return Effect.void
    away = true
    outage++
    return Effect.logWarning(
      `The database is unreachable (${codeOf(error) ?? error.reason._tag}); answering 503 service_unavailable until it returns`
    )
  })

/** Only a statement that started after the outage began proves it over; one already running may just have been lucky. */
const cameBack = (startedIn: number) =>
  Effect.suspend(() => {
    if (!away || startedIn !== outage) return Effect.void
    away = false
    return Effect.logInfo("The database is reachable again")
  })

/**
 * SQL failures are not the caller's doing: they become defects (500), except an
 * unreachable database, which becomes `StoreUnavailable` (503). A row that does
 * not fit the Schema it is read with (`SchemaError`) is a defect too: a broken store.
 */
export const orDie = <A, R>(effect: Effect.Effect<A, SqlError | Schema.SchemaError, R>): Effect.Effect<A, never, R> =>
  Effect.suspend(() => {
    const guarded = Effect.catch(effect, (error) =>
      isSqlError(error) && isUnreachable(error)
        ? Effect.andThen(wentAway(error), Effect.die(new StoreUnavailable({ message: "The database is unreachable" })))
        : Effect.die(error)
    )
    // While the database is away, a success ends the outage; otherwise nothing is added to the statement.
    if (!away) return guarded
    const startedIn = outage
    return Effect.tap(guarded, () => cameBack(startedIn))
  })

export const iso = (value: unknown): string =>
  value instanceof Date ? value.toISOString() : new Date(value as string).toISOString()

export const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : iso(value))

/**
 * A `timestamptz` column (both drivers give a `Date`) read as the ISO string the
 * domain uses: `iso` for rows described by a Schema.
 */
export const Timestamp = Schema.Date.pipe(
  Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transform({ decode: (date) => date.toISOString(), encode: (text) => new Date(text) })
  )
)

export const json = <A>(value: unknown): A => (typeof value === "string" ? JSON.parse(value) : value) as A

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Ids in uuid columns: anything else names nothing, and PostgreSQL would refuse the cast. */
export const isUuid = (value: string): boolean => UUID.test(value)

/**
 * Rows a per-account counter is spread over, and the one a connection writes: its backend's,
 * so two writes of one account wait on each other only when their connections share a stripe
 * (docs/performance.md, "Per-account counters"). Migration 0006's function uses the same 64.
 */
export const COUNT_STRIPES = 64
export const backendStripe = `(pg_backend_pid() % ${COUNT_STRIPES})::smallint`

/**
 * A PostgreSQL text[] literal (`{"a","b"}`), for `= ANY(…::text[])`: the planner sees how
 * many values there are, so a batch's UPDATE probes the primary key instead of joining every
 * row of the account.
 */
export const textArray = (values: ReadonlyArray<string>): string =>
  `{${values.map((value) => `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(",")}}`
