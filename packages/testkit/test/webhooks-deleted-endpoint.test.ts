import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { afterAll } from "vitest"
import * as SqlClient from "effect/sql/SqlClient"
import { Operator } from "@leadline/core/admin/Operator"
import { Authenticator } from "@leadline/core/auth/Authenticator"
import { CurrentPrincipal } from "@leadline/core/auth/Principal"
import { Leads } from "@leadline/core/leads/Leads"
import { DeliveryQueue } from "@leadline/core/webhooks/DeliveryQueue"
import { Webhooks } from "@leadline/core/webhooks/Webhooks"
import { OutboundSettings } from "@leadline/core/outbound/OutboundSettings"
import { WebhooksRepo } from "@leadline/core/webhooks/WebhooksRepo"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as TestDatabase from "../src/TestDatabase.ts"

// The SQL stores on PostgreSQL (TEST_DATABASE_URL) or PGlite, in this process.
const database = await TestDatabase.make()
afterAll(() => database.dispose())
const app = SqlApp.layer(database.config).pipe(
  Layer.provide(Layer.succeed(OutboundSettings, { allowPrivateUrls: false }))
)

layer(app, { timeout: 60_000 })(`a deleted endpoint on ${database.label}`, (it) => {
  it.effect("never gets a delivery queued by a transaction that raced its deletion", () =>
    Effect.gen(function* () {
      const created = yield* (yield* Operator).createAccount({ name: "Race" })
      const principal = yield* (yield* Authenticator).authenticate(created.api_key)
      const sql = yield* SqlClient.SqlClient
      const endpoint = yield* (yield* Webhooks)
        .register({ url: "https://hooks.example.com/race", events: ["lead.created"] })
        .pipe(Effect.provideService(CurrentPrincipal, principal))
      yield* (yield* Leads)
        .create({ name: "Raced", phone: "+14155550199" })
        .pipe(Effect.provideService(CurrentPrincipal, principal))
      // What a delete that committed between the event's endpoint lookup and its
      // commit leaves behind: the endpoint gone, its delivery still pending.
      yield* sql`UPDATE webhook_endpoints SET deleted_at = now() WHERE id = ${endpoint.id}::uuid`
      const statuses = Effect.map(
        sql<{ status: string }>`SELECT status FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id}::uuid`,
        (rows) => rows.map((row) => row.status)
      )
      assert.deepStrictEqual(yield* statuses, ["pending"])

      const claimed = yield* (yield* DeliveryQueue).claim("worker-1", Date.now() + 1000, 30_000, 10)
      assert.deepStrictEqual(
        claimed.filter((delivery) => delivery.url.endsWith("/race")),
        []
      )
      assert.deepStrictEqual(yield* statuses, ["cancelled"])
    })
  )
})

// Two transactions at once need two connections: PostgreSQL only (TEST_DATABASE_URL).
if (database.kind !== "postgres") console.log("redelivery racing a deletion: needs TEST_DATABASE_URL (two connections)")
else
  layer(app, { timeout: 60_000 })(`redelivery racing an endpoint's deletion on ${database.label}`, (it) => {
    it.effect("is refused when the deletion commits while it runs, and requeues nothing", () =>
      Effect.gen(function* () {
        const created = yield* (yield* Operator).createAccount({ name: "Race" })
        const principal = yield* (yield* Authenticator).authenticate(created.api_key)
        const sql = yield* SqlClient.SqlClient
        const webhooks = yield* Webhooks
        const endpoint = yield* webhooks
          .register({ url: "https://hooks.example.com/redeliver-race", events: ["lead.created"] })
          .pipe(Effect.provideService(CurrentPrincipal, principal))
        yield* (yield* Leads)
          .create({ name: "Raced", phone: "+14155550198" })
          .pipe(Effect.provideService(CurrentPrincipal, principal))
        const [delivery] = yield* sql<{ id: string }>`
          UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL
          WHERE endpoint_id = ${endpoint.id}::uuid RETURNING id`

        // The deletion, done and held uncommitted until released.
        const deleted = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const deleting = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              const removed = yield* (yield* WebhooksRepo).deleteEndpoint(
                principal.accountId,
                endpoint.id,
                new Date().toISOString()
              )
              yield* Deferred.succeed(deleted, undefined)
              yield* Deferred.await(release)
              return removed
            })
          )
          .pipe(Effect.forkChild)
        yield* Deferred.await(deleted)
        const redelivering = yield* webhooks
          .redeliver(delivery!.id)
          .pipe(Effect.provideService(CurrentPrincipal, principal), Effect.flip, Effect.forkChild)

        // Commit the deletion once the redelivery waits for the endpoint's row (or after 2 s,
        // when it does not wait: then it already read the endpoint as not deleted).
        for (let i = 0; i < 100; i++) {
          const [waiting] = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%webhook_endpoints%'`
          if (waiting!.n > 0) break
          // Real time: it.effect runs on the test clock.
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
        }
        yield* Deferred.succeed(release, undefined)
        assert.isTrue(yield* Fiber.join(deleting))

        const error = yield* Fiber.join(redelivering)
        assert.strictEqual(error._tag, "Conflict")
        const rows = yield* sql<{ status: string }>`SELECT status FROM webhook_deliveries WHERE id = ${delivery!.id}`
        assert.deepStrictEqual(
          rows.map((row) => row.status),
          ["failed"]
        )
      })
    )
  })
