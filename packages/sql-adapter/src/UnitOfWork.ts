import { Cause, Context, Effect, Exit, Metric, Scope, Semaphore, Stream } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import { isSqlError, type SqlError } from "effect/sql/SqlError"
import type * as Statement from "effect/sql/Statement"
import { REQUEST_SECONDS } from "@leadline/core/observability/OpsMetrics"
import { orDie } from "./internal/store.ts"
import * as WalFlush from "./WalFlush.ts"

/**
 * The SQL unit of work behind core's `Transactor` (docs/performance.md, "One statement per create").
 *
 * A unit opens no transaction until one of its statements (other than a plain read, `read`) runs: writes whose result nobody
 * reads (`writeBehind`) wait for the unit's next statement or its end, and a store may
 * *presume* the outcome of a write it would otherwise have to ask about (`presume`). A unit
 * that ran no statement ends as one statement: its writes fused into one `WITH … SELECT 1`,
 * which PostgreSQL commits atomically on its own, with no BEGIN and no COMMIT. A create with
 * an `Idempotency-Key` (the key's record, the lead, its count and its event) is one round trip
 * instead of six.
 *
 * A presumption that turns out wrong (a presumed write breaks a unique constraint: the key was
 * taken, the phone too) fails the statement that carried it, which rolls the unit back whole, and
 * the unit runs again from the start without presumptions, where the stores ask as before. So a
 * unit may run twice: units do nothing outside the database but compute (no calls out, no
 * messages), which core's units already keep to.
 */

/** A write waiting for the unit's next statement; `signal` runs after the commit if it wrote a row. */
interface Pending {
  readonly write: Statement.Fragment
  readonly signal?: Effect.Effect<void>
}

interface Unit {
  /** Writes not sent yet, in the order they were made. */
  readonly writes: Array<Pending>
  /** What runs once the unit has committed (announcements: `afterCommit`). */
  readonly afterCommit: Array<Effect.Effect<void>>
  /** False on the second run: every write is asked about. */
  readonly mayPresume: boolean
  presumed: boolean
  /** What a store keeps between two of its calls in one unit (an idempotency key's fingerprint). */
  readonly notes: Map<string, unknown>
  /** `releaseLocksBeforeFlush` was asked for. */
  early: boolean
  /** `awaitFlush` was asked for. */
  flushAfter: boolean
}

const committed = (how: "one_statement" | "transaction") =>
  Metric.counter("leadline_db_units_total", {
    description: "Units of work that wrote, by how they committed: as one statement, or as a transaction",
    incremental: true,
    attributes: { committed: how }
  })

/** How units ended (`/metrics`): reruns should be rare; one-statement units are the fast path. */
export const unitsEnded = { one_statement: committed("one_statement"), transaction: committed("transaction") }

export const unitReruns = Metric.counter("leadline_db_unit_reruns_total", {
  description: "Units of work run again without presumptions, after a presumed write failed",
  incremental: true
})

/** docs/observability.md §B2's transaction series: every unit of work, however it commits. */
export const transactionsInFlight = Metric.gauge("leadline_db_transactions_in_flight", {
  description: "Units of work (transactions) running now"
})

export const transactionDuration = Metric.histogram("leadline_db_transaction_duration_seconds", {
  description: "How long a unit of work (a transaction) ran, from its start to its commit or rollback",
  boundaries: REQUEST_SECONDS
})

const CurrentUnit = Context.Reference<Unit | undefined>("sql-adapter/UnitOfWork", { defaultValue: () => undefined })

/** Set around a plain read (`read`): it may run before the unit's transaction is open. */
const PlainRead = Context.Reference<boolean>("sql-adapter/UnitOfWork/PlainRead", { defaultValue: () => false })

/** A presumed write failed (the defect that says so): the unit runs again without presumptions. */
class PresumptionFailed {
  readonly _tag = "PresumptionFailed"
}

/**
 * Sends `writes` with the unit's next statement or at its end; outside a unit, at once, as one
 * statement. For writes whose result nobody reads: each one INSERT, UPDATE or DELETE, without a
 * WITH of its own that writes, and not touching a row another pending write of the unit touches
 * (the writes of a unit may end as the parts of one statement).
 */
export const writeBehind = (
  sql: SqlClient.SqlClient,
  ...given: ReadonlyArray<Statement.Fragment | Signalling>
): Effect.Effect<void> => {
  const writes = given.map((write) => (write instanceof Signalling ? write : { write }))
  return Effect.flatMap(CurrentUnit, (unit) =>
    unit === undefined
      ? Effect.suspend(() => {
          const { statement, signalsOf } = fused(sql, writes)
          return Effect.flatMap(orDie(sql<Record<string, unknown>>`${statement}`), (rows) =>
            Effect.forEach(signalsOf(rows), (signal) => signal, { discard: true })
          )
        })
      : Effect.sync(() => void unit.writes.push(...writes))
  )
}

/**
 * A write for `writeBehind` that returns a row (`RETURNING 1`) for each row it wrote: `signal`
 * runs after the unit commits, if the write wrote any (an announcement: `afterCommit`).
 */
export class Signalling implements Pending {
  readonly write: Statement.Fragment
  readonly signal: Effect.Effect<void>
  constructor(write: Statement.Fragment, signal: Effect.Effect<void>) {
    this.write = write
    this.signal = signal
  }
}

/**
 * For a statement whose row says whether it wrote (`SELECT EXISTS (…) AS wrote`): `signal` once
 * the unit commits, if it did (`afterCommit`).
 */
export const afterCommitIfWrote =
  (signal: Effect.Effect<void>) =>
  ([row]: ReadonlyArray<{ readonly wrote?: unknown }>): Effect.Effect<void> =>
    row?.wrote === true ? afterCommit(signal) : Effect.void

/**
 * Runs `effect` once the unit has committed, and not at all if it rolls back; outside a unit, at
 * once (the write before it has committed on its own). For announcements (Notifications.ts): a
 * wake-up sent inside the transaction would hold every other notifying commit back until this
 * one's flush.
 */
export const afterCommit = (effect: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.flatMap(CurrentUnit, (unit) =>
    unit === undefined ? effect : Effect.sync(() => void unit.afterCommit.push(effect))
  )

/**
 * Whether a store may presume a write's outcome here: inside a unit on its first run. A presuming
 * store writes with `presume` what must fail (a unique constraint) when the presumption is wrong,
 * and answers as if it held.
 */
export const mayPresume: Effect.Effect<boolean> = Effect.map(
  CurrentUnit,
  (unit) => unit !== undefined && unit.mayPresume
)

/**
 * Presumes, for the rest of the unit, what a store would otherwise ask the database, and sends
 * `writes` with the unit's end: they must fail there (a unique constraint) when the presumption
 * was wrong, and the unit then runs again without presumptions. Only where `mayPresume` says so.
 */
export const presume = (...writes: ReadonlyArray<Statement.Fragment>): Effect.Effect<void> =>
  Effect.flatMap(CurrentUnit, (unit) =>
    Effect.sync(() => {
      if (unit === undefined || !unit.mayPresume) throw new Error("presume: check mayPresume first")
      unit.presumed = true
      unit.writes.push(...writes.map((write) => ({ write })))
    })
  )

/**
 * For a write that locks a row every concurrent unit wants (an order's stock): where the unit
 * ends as one statement, that statement commits without waiting for PostgreSQL to flush its WAL,
 * so the row is free as soon as the statement has run (a transaction keeps its locks to the end
 * of its commit, and the flush was most of the commit); the unit then ends only once a flush has
 * covered its commit (WalFlush.ts), so its caller never answers with what a crash could take
 * back. A unit that became a transaction commits as before, and so does every unit where the
 * database role may not run flush rounds (`WalFlush.probe`). Other transactions may see the
 * unit's writes during that flush: one that writes commits after it in the WAL, so is flushed
 * after it; one that only reads may show them a moment before they are durable (docs/performance.md,
 * "A hot row's lock and the commit's flush").
 */
export const releaseLocksBeforeFlush: Effect.Effect<void> = Effect.map(CurrentUnit, (unit) => {
  if (unit !== undefined) unit.early = true
})

/**
 * The unit ends only once the WAL is flushed past every commit made before its end: for a unit
 * that answers with what another unit committed (a replayed `Idempotency-Key`'s stored answer),
 * which may have released its locks before its flush (`releaseLocksBeforeFlush`).
 */
export const awaitFlush: Effect.Effect<void> = Effect.map(CurrentUnit, (unit) => {
  if (unit !== undefined) unit.flushAfter = true
})

/**
 * Marks `effect`'s statements as plain reads: SELECTs without a locking clause or anything that
 * writes. Until the unit has written, they run on its connection without opening its transaction
 * (each sees what it would see inside: PostgreSQL's READ COMMITTED takes a snapshot per
 * statement), so that a unit that reads, then only writes, still ends as one statement. After a
 * write they run in the transaction, and see the unit's writes.
 */
export const read = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, PlainRead, true)

/**
 * A kind of note a store keeps for the rest of a unit (what it presumed, say), typed by what it
 * holds; each note of the kind is keyed by an id of the store's (`""` for one per unit).
 */
export interface Notes<A> {
  readonly name: string
  /** Carries `A` in the type only. */
  readonly _holds?: (value: A) => A
}

export const notes = <A>(name: string): Notes<A> => ({ name })

const slot = (notes: { readonly name: string }, id: string) => `${notes.name}\u0000${id}`

/** Keeps `value` under `id` for the rest of the unit (nothing outside a unit). */
export const note = <A>(notes: Notes<A>, id: string, value: A): Effect.Effect<void> =>
  Effect.map(CurrentUnit, (unit) => void unit?.notes.set(slot(notes, id), value))

/** What was kept under `id` in this unit, if anything (undefined outside a unit). */
export const noted = <A>(notes: Notes<A>, id: string): Effect.Effect<A | undefined> =>
  Effect.map(CurrentUnit, (unit) => unit?.notes.get(slot(notes, id)) as A | undefined)

export const forget = <A>(notes: Notes<A>, id: string): Effect.Effect<void> =>
  Effect.map(CurrentUnit, (unit) => void unit?.notes.delete(slot(notes, id)))

/**
 * The pending writes as one statement (a write alone is sent as it is), run in the order they were
 * made. PostgreSQL runs the writing CTEs that nothing reads after its main query, from the last
 * listed to the first (ExecPostprocessPlan; sql-unit-of-work.test.ts pins it), so they are listed in
 * reverse: a write made last to hold a contended row lock for the shortest time (an order's stock)
 * does run last, and takes the lock only for the statement's after-triggers and the commit. With
 * it, how to read from its rows the signals of the writes that wrote.
 */
const fused = (
  sql: SqlClient.SqlClient,
  writes: ReadonlyArray<Pending>,
  commitEarly = false
): {
  readonly statement: Statement.Fragment
  readonly signalsOf: (rows: ReadonlyArray<Record<string, unknown>>) => ReadonlyArray<Effect.Effect<void>>
} => {
  if (writes.length === 1 && !commitEarly) {
    // Alone, the write is the statement: its own rows say whether it wrote.
    const { write, signal } = writes[0]!
    return { statement: write, signalsOf: (rows) => (signal !== undefined && rows.length > 0 ? [signal] : []) }
  }
  // A signalling write is read by the main query (whether it wrote), so it runs before the
  // writes nothing reads; those keep their order among themselves.
  const flags = writes.flatMap((pending, i) =>
    pending.signal === undefined ? [] : [sql`EXISTS (SELECT 1 FROM ${sql.literal(`w${i}`)}) AS ${sql.literal(`s${i}`)}`]
  )
  const statement = sql`WITH ${sql.join(
    ", ",
    false
  )(writes.map((pending, i) => sql`${sql.literal(`w${i}`)} AS (${pending.write})`).reverse())} SELECT ${sql.join(
    ", ",
    false
  )([
    // The setting holds for this statement's own transaction, and is read as it commits.
    commitEarly ? sql`set_config('synchronous_commit', 'off', true)` : sql`1`,
    ...flags
  ])}`
  return {
    statement,
    signalsOf: (rows) =>
      writes.flatMap((pending, i) =>
        pending.signal !== undefined && rows[0]?.[`s${i}`] === true ? [pending.signal] : []
      )
  }
}

const run = (sql: SqlClient.SqlClient, fragment: Statement.Fragment, conn: Connection) => {
  const [text, params] = sql`${fragment}`.compile()
  return conn.execute(text, params, undefined) as Effect.Effect<ReadonlyArray<Record<string, unknown>>, SqlError>
}

const presumptionFailed = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) &&
  exit.cause.reasons.some((reason) => Cause.isDieReason(reason) && reason.defect instanceof PresumptionFailed)

/** A unit on the connection it takes when its first statement runs, a transaction from its first statement that is not a plain read. */
const attempt = <A, E, R>(sql: SqlClient.SqlClient, effect: Effect.Effect<A, E, R>, mayPresume: boolean) =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      const unit: Unit = {
        writes: [],
        afterCommit: [],
        mayPresume,
        presumed: false,
        notes: new Map(),
        early: false,
        flushAfter: false
      }
      let scope: Scope.Closeable | undefined
      const lock = Semaphore.makeUnsafe(1)
      let conn: Connection | undefined
      /** BEGIN was sent: the unit is a transaction from here on. */
      let begun = false

      // A presumed write that fails here fails the presumption, whichever statement it waited for.
      const flush = Effect.suspend(() => {
        if (unit.writes.length === 0 || conn === undefined) return Effect.void
        const { statement, signalsOf } = fused(sql, unit.writes.splice(0))
        const sent = Effect.map(run(sql, statement, conn), (rows) => {
          unit.afterCommit.push(...signalsOf(rows))
        })
        return unit.presumed ? Effect.catch(sent, () => Effect.die(new PresumptionFailed())) : sent
      })
      const connection = Effect.suspend(() => {
        if (conn !== undefined) return Effect.succeed(conn)
        scope ??= Scope.makeUnsafe()
        return Effect.map(Scope.provide(sql.reserve, scope), (taken) => {
          conn = taken
          return taken
        })
      })
      // Before a statement of the unit: its connection; unless it is a plain read before any write,
      // BEGIN and the writes waiting.
      const ready: Effect.Effect<Connection, SqlError> = Effect.flatMap(PlainRead, (plain) => {
        if (conn !== undefined && unit.writes.length === 0 && (begun || plain)) return Effect.succeed(conn)
        return lock.withPermit(
          Effect.gen(function* () {
            const taken = yield* connection
            if (plain && !begun && unit.writes.length === 0) return taken
            if (!begun) {
              yield* taken.execute("BEGIN", [], undefined)
              begun = true
            }
            yield* flush
            return taken
          })
        )
      })
      const lazy: Connection = {
        execute: (text, params, transform) => Effect.flatMap(ready, (c) => c.execute(text, params, transform)),
        executeRaw: (text, params) => Effect.flatMap(ready, (c) => c.executeRaw(text, params)),
        executeValues: (text, params) => Effect.flatMap(ready, (c) => c.executeValues(text, params)),
        executeValuesUnprepared: (text, params) =>
          Effect.flatMap(ready, (c) => c.executeValuesUnprepared(text, params)),
        executeUnprepared: (text, params, transform) =>
          Effect.flatMap(ready, (c) => c.executeUnprepared(text, params, transform)),
        executeStream: (text, params, transform) =>
          Stream.unwrap(Effect.map(ready, (c) => c.executeStream(text, params, transform)))
      }

      const exit = yield* restore(effect).pipe(
        Effect.provideService(sql.transactionService, [lazy, 0] as const),
        Effect.provideService(CurrentUnit, unit),
        Effect.exit
      )
      // No transaction: the writes are the unit, and one statement commits them on its own.
      const alone = Exit.isSuccess(exit) && !begun
      const written = unit.writes.length
      const committedEarly = unit.early && alone && written > 0 && WalFlush.supported(sql)
      const end = (): Effect.Effect<void, SqlError> => {
        if (Exit.isFailure(exit)) return begun ? Effect.ignore(conn!.execute("ROLLBACK", [], undefined)) : Effect.void
        if (!begun) {
          if (written === 0) return Effect.void
          const { statement, signalsOf } = fused(sql, unit.writes, committedEarly)
          // Interruptible like the unit's own statements: a request that timed out cancels it.
          const sent = conn === undefined ? sql<Record<string, unknown>>`${statement}` : run(sql, statement, conn)
          return restore(
            Effect.map(sent, (rows) => {
              unit.afterCommit.push(...signalsOf(rows))
            })
          )
        }
        return Effect.gen(function* () {
          yield* restore(flush)
          const result = yield* conn!.executeRaw("COMMIT", [])
          if ((result as { command?: string } | undefined)?.command === "ROLLBACK") {
            return yield* Effect.die(new Error("COMMIT rolled back an aborted transaction"))
          }
        }).pipe(
          // The connection goes back to the pool outside any transaction, whatever failed.
          Effect.onError(() => Effect.ignore(conn!.execute("ROLLBACK", [], undefined)))
        )
      }
      const ended = yield* Effect.exit(end())
      // Closing a closed scope does nothing: a unit that gave its connection back while it waited closes it again.
      const release = Effect.suspend(() => (scope === undefined ? Effect.void : Scope.close(scope, Exit.void)))
      // With the unit's connection, if it took one: a flush round may run there, or the unit gives
      // it back while it waits. The round's failure is not a presumption's (the unit committed):
      // never a rerun.
      const durable =
        Exit.isSuccess(exit) && Exit.isSuccess(ended) && (committedEarly || unit.flushAfter)
          ? yield* Effect.exit(
              restore(WalFlush.flushed(sql, conn === undefined ? undefined : { connection: conn, release }))
            )
          : Exit.void
      yield* release
      const retry =
        unit.presumed &&
        ((alone && Exit.isFailure(ended) && ended.cause.reasons.some(Cause.isFailReason)) ||
          presumptionFailed(exit) ||
          presumptionFailed(ended))
      const result: Exit.Exit<A, E | SqlError> = Exit.isFailure(ended)
        ? Exit.failCause(ended.cause)
        : Exit.isFailure(durable)
          ? Exit.failCause(durable.cause)
          : exit
      if (Exit.isSuccess(result) && (begun || written > 0)) {
        yield* Metric.update(begun ? unitsEnded.transaction : unitsEnded.one_statement, 1)
      }
      if (Exit.isSuccess(result)) yield* Effect.forEach(unit.afterCommit, (effect) => effect, { discard: true })
      return { exit: result, retry }
    })
  )

/**
 * Runs `effect` as one unit of work (a nested call joins the open one). SQL failures of the unit's
 * own statements (BEGIN, the fused writes, COMMIT) are the database's: defects, or 503 when it is away.
 */
export const withUnit = <A, E, R>(sql: SqlClient.SqlClient, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(CurrentUnit, (open) => {
    if (open !== undefined) return effect
    const once = (mayPresume: boolean): Effect.Effect<A, E, R> =>
      Effect.flatMap(attempt(sql, effect, mayPresume), ({ exit, retry }) => {
        if (retry && mayPresume) return Effect.andThen(Metric.update(unitReruns, 1), once(false))
        return Effect.catchIf(exit as Exit.Exit<A, E | SqlError>, isSqlError, (error) =>
          orDie(Effect.fail(error))
        ) as Effect.Effect<A, E, R>
      })
    return Effect.suspend(() => {
      const started = performance.now()
      return Effect.andThen(
        Metric.modify(transactionsInFlight, 1),
        Effect.ensuring(
          once(true),
          Effect.andThen(
            Metric.modify(transactionsInFlight, -1),
            Effect.suspend(() => Metric.update(transactionDuration, (performance.now() - started) / 1000))
          )
        )
      )
    })
  })
