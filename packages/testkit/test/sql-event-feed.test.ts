import { Deferred, Effect, Fiber, type Layer, ManagedRuntime } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EventFeed } from "@leadline/core/eventlog/EventFeed"
import * as Ids from "@leadline/core/Ids"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as TestDatabase from "../src/TestDatabase.ts"

/**
 * The stream's log on SQL (sql-adapter/eventlog/SqlEventFeed.ts) when commits race: an event
 * whose id was made first can commit last. Read by id, a reader that had passed the later id
 * would skip it for good; the feed holds back what committed after a transaction still running
 * and hands both over, in commit order, once it ends. Needs two sessions: PostgreSQL only.
 */

const postgres = process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== ""
let database: TestDatabase.TestDatabase
let runtime: ManagedRuntime.ManagedRuntime<Layer.Success<ReturnType<typeof SqlApp.layer>>, unknown>

beforeAll(async () => {
  if (!postgres) return
  database = await TestDatabase.make()
  runtime = ManagedRuntime.make(SqlApp.layer(database.config))
}, 60_000)
afterAll(async () => {
  await runtime?.dispose()
  await database?.dispose()
})

describe("the event feed on PostgreSQL", () => {
  it.skipIf(!postgres)(
    "never passes an event that commits after a later id did",
    async () => {
      const result = await runtime.runPromise(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const feed = yield* EventFeed
          const accountId = crypto.randomUUID()
          yield* sql`INSERT INTO accounts (id, name, owner_user_id, plan_id, subscription_status, created_at)
          VALUES (${accountId}::uuid, 'feed', ${crypto.randomUUID()}::uuid, 'free', 'active', now())`
          const insert = (id: string) => {
            const event = {
              id,
              type: "lead.created",
              created_at: new Date().toISOString(),
              account_id: accountId,
              data: {}
            }
            return sql`INSERT INTO events (id, account_id, type, created_at, payload)
            VALUES (${id}, ${accountId}::uuid, 'lead.created', now(), ${JSON.stringify(event)}::jsonb)`
          }
          const start = yield* feed.head
          const early = yield* Ids.make("evt")
          const late = yield* Ids.make("evt")
          const written = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          // The early id's transaction writes first, then waits while the late one commits.
          const slow = yield* Effect.forkChild(
            sql.withTransaction(
              Effect.andThen(
                insert(early),
                Effect.andThen(Deferred.succeed(written, undefined), Deferred.await(release))
              )
            )
          )
          yield* Deferred.await(written)
          yield* sql.withTransaction(insert(late))
          const whileRunning = yield* feed.next(start, 100)
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(slow)
          // Another session's transaction (any database of the server) may hold the horizon a moment longer.
          let afterwards = yield* feed.next(whileRunning.reached, 100)
          for (let i = 0; i < 100 && afterwards.items.length < 2; i++) {
            yield* Effect.sleep("20 millis")
            afterwards = yield* feed.next(whileRunning.reached, 100)
          }
          const resumeAfterEarly = yield* feed.between(
            accountId,
            ["lead.created"],
            afterwards.items[0]!.position,
            afterwards.reached,
            100
          )
          return { whileRunning, afterwards, resumeAfterEarly, early, late }
        })
      )
      const ids = (items: ReadonlyArray<{ event: { id: string } }>) => items.map((item) => item.event.id)
      expect(ids(result.whileRunning.items)).toEqual([])
      expect(result.whileRunning.pending).toBe(true)
      expect(ids(result.afterwards.items)).toEqual([result.early, result.late])
      expect(ids(result.resumeAfterEarly)).toEqual([result.late])
    },
    30_000
  )
})
