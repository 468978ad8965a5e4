import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { afterAll } from "vitest"
import * as SqlClient from "effect/sql/SqlClient"
import { Operator } from "@leadline/core/accounts/Operator"
import { Authenticator } from "@leadline/core/auth/Authenticator"
import { CurrentPrincipal } from "@leadline/core/auth/Principal"
import { Leads } from "@leadline/core/leads/Leads"
import { DeliveryQueue } from "@leadline/core/webhooks/DeliveryQueue"
import { Webhooks, WebhookSettings } from "@leadline/core/webhooks/Webhooks"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as TestDatabase from "../src/TestDatabase.ts"

// The SQL stores on PostgreSQL (TEST_DATABASE_URL) or PGlite, in this process.
const database = await TestDatabase.make()
afterAll(() => database.dispose())
const app = SqlApp.layer(database.config).pipe(
  Layer.provide(Layer.succeed(WebhookSettings, { allowPrivateUrls: false }))
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
