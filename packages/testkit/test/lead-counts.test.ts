import { Deferred, Effect, Exit, Fiber, Layer, ManagedRuntime } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Lead } from "@leadline/core/leads/Lead"
import { LeadsRepo } from "@leadline/core/leads/LeadsRepo"
import * as Database from "@leadline/sql-adapter/Database"
import * as SqlLeads from "@leadline/sql-adapter/leads/SqlLeads"
import * as TestDatabase from "../src/TestDatabase.ts"

/** An account's lead total is spread over stripes: exact on read, and no single row every create waits on. */

const ACCOUNT = "00000000-0000-4000-8000-0000000000c1"
const database = await TestDatabase.make()
let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient | LeadsRepo, unknown>
const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | LeadsRepo>) => runtime.runPromise(effect)

let phones = 0
const lead = (): Lead => {
  const n = ++phones
  return {
    id: `ld_count${String(n).padStart(20, "0")}`,
    name: `Counted ${n}`,
    phone: `+1415555${String(n).padStart(4, "0")}`,
    email: null,
    tags: [],
    status: "new",
    marketing_opt_out: null,
    assigned_user_id: null,
    attributes: {},
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    updated_at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString()
  }
}

const total = Effect.flatMap(LeadsRepo, (repo) => repo.list(ACCOUNT, { limit: 1, offset: 0 })).pipe(
  Effect.map((page) => page.total)
)
const insert = (value: Lead) => Effect.flatMap(LeadsRepo, (repo) => repo.insert(ACCOUNT, value))
const pid = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`).pipe(
  Effect.map(([row]) => row!.pid % SqlLeads.COUNT_STRIPES)
)

beforeAll(async () => {
  runtime = ManagedRuntime.make(SqlLeads.layer.pipe(Layer.provideMerge(Database.layer(database.config))))
  await run(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql`INSERT INTO accounts (id, name, owner_user_id, plan_id, subscription_status, created_at)
                   VALUES (${ACCOUNT}::uuid, 'Counted', gen_random_uuid(), 'free', 'active', now())`
    )
  )
}, 60_000)
afterAll(async () => {
  await runtime?.dispose()
  await database.dispose()
})

describe(`lead counts on ${database.label}`, () => {
  it("are the exact total across stripes, after creates and deletes on several connections", async () => {
    const made = Array.from({ length: 24 }, lead)
    await run(Effect.forEach(made, insert, { concurrency: 8 }))
    expect(await run(total)).toBe(24)
    await run(
      Effect.forEach(made.slice(0, 5), (value) => Effect.flatMap(LeadsRepo, (repo) => repo.remove(ACCOUNT, value.id)), {
        concurrency: 5
      })
    )
    // A create refused for its phone counts nothing.
    expect(Exit.isFailure(await runtime.runPromiseExit(insert({ ...lead(), phone: made[10]!.phone })))).toBe(true)
    expect(await run(total)).toBe(19)
    const [rows] = await run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ leads: number }>`SELECT count(*)::int AS leads FROM leads WHERE account_id = ${ACCOUNT}::uuid`
      )
    )
    expect(rows!.leads).toBe(19)
  })

  if (database.kind === "postgres") {
    it("let a create commit while another create of the same account holds its transaction open", async () => {
      const holding = await run(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const inserted = yield* Deferred.make<number>()
          const release = yield* Deferred.make<void>()
          // The first create inserts (and moves its stripe) and keeps its transaction open.
          const first = yield* Effect.forkChild(
            sql.withTransaction(
              Effect.gen(function* () {
                const stripe = yield* pid
                yield* insert(lead())
                yield* Deferred.succeed(inserted, stripe)
                yield* Deferred.await(release)
              })
            )
          )
          const heldStripe = yield* Deferred.await(inserted)
          // Others of the same account, each on its own connection, may wait 1 s for a lock at most.
          const others = yield* Effect.forEach(
            Array.from({ length: 4 }, lead),
            (value) =>
              sql
                .withTransaction(
                  Effect.gen(function* () {
                    yield* sql`SET LOCAL lock_timeout = '1s'`
                    const stripe = yield* pid
                    yield* insert(value)
                    return stripe
                  })
                )
                .pipe(Effect.exit),
            { concurrency: "unbounded" }
          )
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(first)
          return { heldStripe, others }
        })
      )
      const elsewhere = holding.others.filter((exit) => Exit.isSuccess(exit) && exit.value !== holding.heldStripe)
      const failed = holding.others.filter(Exit.isFailure)
      // Four connections all on the held stripe would be a 1 in 16 million draw.
      expect(elsewhere.length).toBeGreaterThan(0)
      // Only a create on the very stripe held may have waited: none elsewhere did.
      expect(failed.length).toBeLessThanOrEqual(holding.others.length - elsewhere.length)
    })
  }
})
