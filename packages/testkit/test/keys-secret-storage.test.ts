import { type Context, Effect, Exit, Layer, Scope } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IdempotencyStore } from "@leadline/core/idempotency/IdempotencyStore"
import * as MemoryApp from "@leadline/memory-adapter/MemoryApp"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { makeAccount } from "../src/Fixtures.ts"
import * as Keys from "../src/keys/KeysResource.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * API keys are stored only as a SHA-256 hash (docs/contract.md), so the idempotency record of
 * `POST /api/keys` must not keep the key its first answer showed: read from the stores
 * themselves, on the in-memory wiring and on SQL (the table too).
 */
const onWiring = (
  name: string,
  makeApp: () => Promise<{
    readonly app: Layer.Layer<any, unknown>
    readonly dispose: () => Promise<void>
  }>,
  sql: boolean
) =>
  describe(name, () => {
    const scope = Effect.runSync(Scope.make())
    let context: Context.Context<any>
    let server: TestServer.Running
    let dispose: () => Promise<void>

    beforeAll(async () => {
      const made = await makeApp()
      dispose = made.dispose
      context = await Effect.runPromise(Layer.buildWithScope(made.app, scope))
      server = await TestServer.start({ app: Layer.succeedContext(context) })
    })
    afterAll(async () => {
      await server?.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await dispose?.()
    })

    const run = <A>(effect: Effect.Effect<A, unknown, any>): Promise<A> =>
      Effect.runPromise(Effect.provide(effect, context) as Effect.Effect<A, unknown>)

    it("keeps the create's answer with api_key null in the idempotency record, and no key anywhere", async () => {
      const account = await makeAccount(server)
      const idempotencyKey = `stored-${crypto.randomUUID()}`
      const body = { name: "stored", scopes: ["leads:read"] }
      const first = await Keys.postKey(server, account.ownerKey, body, { "idempotency-key": idempotencyKey })
      expect(first.status, first.text).toBe(201)
      const secret: string = first.body.api_key
      expect(secret).toMatch(/^lk_[A-Za-z0-9_-]{43}$/)

      // The record as the store holds it: a reservation of a completed key hands back its stored answer.
      const now = Date.now()
      const reservation = await run(
        Effect.flatMap(IdempotencyStore, (store) =>
          store.reserve({ accountId: account.accountId, key: idempotencyKey }, "probe", now, now + 60_000)
        )
      )
      expect(reservation._tag).toBe("Completed")
      if (reservation._tag !== "Completed") return
      expect(reservation.response.status).toBe(201)
      expect(reservation.response.body).toBe(JSON.stringify({ ...first.body, api_key: null }))
      expect(JSON.stringify(reservation)).not.toContain(secret)

      // A replay answers what was stored.
      const replay = await Keys.postKey(server, account.ownerKey, body, { "idempotency-key": idempotencyKey })
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.text).toBe(reservation.response.body)

      if (sql) {
        const rows = await run(
          Effect.flatMap(
            SqlClient.SqlClient,
            (client) =>
              client<
                Record<string, unknown>
              >`SELECT * FROM idempotency_keys WHERE account_id = ${account.accountId}::uuid`
          )
        )
        expect(rows).toHaveLength(1)
        expect(rows[0]!.body).toBe(reservation.response.body)
        // Nowhere in the database: the key table holds its hash and a 9-character prefix only.
        const keyRows = await run(
          Effect.flatMap(
            SqlClient.SqlClient,
            (client) =>
              client<Record<string, unknown>>`SELECT * FROM api_keys WHERE account_id = ${account.accountId}::uuid`
          )
        )
        expect(keyRows.length).toBe(2)
        for (const row of [...rows, ...keyRows]) expect(JSON.stringify(row)).not.toContain(secret)
      }
    })
  })

onWiring(
  "POST /api/keys on the in-memory stores",
  async () => ({ app: MemoryApp.layer, dispose: async () => {} }),
  false
)

onWiring(
  "POST /api/keys on SQL",
  async () => {
    const database = await TestDatabase.make()
    return { app: SqlApp.layer(database.config), dispose: () => database.dispose() }
  },
  true
)
