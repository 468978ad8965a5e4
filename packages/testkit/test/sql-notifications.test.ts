import { Effect, Layer, ManagedRuntime } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "@leadline/sql-adapter/Database"
import { Notifications } from "@leadline/sql-adapter/Notifications"
import * as TestDatabase from "../src/TestDatabase.ts"

/**
 * LISTEN (sql-adapter/Notifications.ts): a NOTIFY committed on a channel wakes its listener, on
 * both databases; on PostgreSQL every channel shares one session outside the pool
 * (PgServerClient.ts), where it used to hold one pooled connection per channel.
 */

const database = await TestDatabase.make()
let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient | Notifications, unknown>

beforeAll(async () => {
  runtime = ManagedRuntime.make(Layer.mergeAll(Database.layer(database.config)))
}, 60_000)
afterAll(async () => {
  await runtime?.dispose()
  await database.dispose()
})

const CHANNELS = ["leadline_test_a", "leadline_test_b", "leadline_test_c"]

describe(`LISTEN on ${database.label}`, () => {
  it("wakes each channel's listener on its NOTIFY, and on PostgreSQL listens on one session for all", async () => {
    const result = await runtime.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const notifications = yield* Notifications
          const wakeups = yield* Effect.forEach(CHANNELS, (channel) => notifications.listen(channel))
          const woken = yield* Effect.forEach(CHANNELS, (channel, i) =>
            Effect.andThen(sql`SELECT pg_notify(${channel}, 'x')`, wakeups[i]!).pipe(
              Effect.timeout("5 seconds"),
              Effect.as(channel)
            )
          )
          const sessions =
            database.kind === "postgres"
              ? yield* sql<{ sessions: number }>`
                  SELECT count(DISTINCT pid)::int AS sessions FROM pg_stat_activity
                  WHERE datname = current_database() AND query LIKE 'LISTEN "leadline_test_%'`.pipe(
                  Effect.map(([row]) => row!.sessions)
                )
              : undefined
          return { woken, sessions }
        })
      )
    )
    expect(result.woken).toEqual(CHANNELS)
    if (database.kind === "postgres") expect(result.sessions).toBe(1)
  })

  it("wakes this process's listeners on an announcement, and on PostgreSQL another server's", async () => {
    const CHANNEL = "leadline_test_announced"
    // A second server on the same database: a database layer of its own, with its own sessions.
    const other = database.kind === "postgres" ? ManagedRuntime.make(Database.layer(database.config)) : undefined
    try {
      let listening: () => void = () => {}
      const ready = new Promise<void>((resolve) => {
        listening = resolve
      })
      const there =
        other?.runPromise(
          Effect.scoped(
            Effect.gen(function* () {
              const wakeup = yield* (yield* Notifications).listen(CHANNEL)
              listening()
              return yield* Effect.timeout(Effect.as(wakeup, "there"), "5 seconds")
            })
          )
        ) ?? Promise.resolve("there")
      if (other !== undefined) await ready
      const here = await runtime.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const notifications = yield* Notifications
            const wakeup = yield* notifications.listen(CHANNEL)
            // Many announcements at once: NOTIFYs coalesce, none is needed per announcement.
            for (let i = 0; i < 50; i++) yield* notifications.announce(CHANNEL)
            return yield* Effect.timeout(Effect.as(wakeup, "here"), "1 second")
          })
        )
      )
      expect([here, await there]).toEqual(["here", "there"])
    } finally {
      await other?.dispose()
    }
  })

  it("wakes this process's listener once per announcement: its own NOTIFY coming back is not a second", async () => {
    const CHANNEL = "leadline_test_once"
    const woken = await runtime.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const notifications = yield* Notifications
          const wakeup = yield* notifications.listen(CHANNEL)
          yield* notifications.announce(CHANNEL)
          yield* Effect.timeout(wakeup, "1 second")
          // Long enough for the NOTIFY to reach PostgreSQL and come back to this session.
          return yield* Effect.timeoutOption(Effect.as(wakeup, "again"), "500 millis")
        })
      )
    )
    expect(woken._tag).toBe("None")
  })
})
