import { Effect, Exit, Layer, Scope } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LeadsRepo } from "@leadline/core/leads/LeadsRepo"
import * as Services from "@leadline/core/Services"
import * as MemoryStores from "@leadline/memory-adapter/MemoryStores"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { makeAccount } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

// The in-memory stores, except that listing leads never answers: a stuck dependency.
const stuckList = Layer.effect(
  LeadsRepo,
  Effect.map(LeadsRepo, (repo) => LeadsRepo.of({ ...repo, list: () => Effect.never }))
)
const app = Services.layer.pipe(Layer.provideMerge(stuckList.pipe(Layer.provideMerge(MemoryStores.layer))))

let server: TestServer.Running

beforeAll(async () => {
  server = await TestServer.start({ app, requestTimeoutSeconds: 1 })
})
afterAll(() => server?.close())

describe("the request timeout", () => {
  it("answers a request stuck past it with a JSON 503, and serves the next requests as usual", async () => {
    const account = await makeAccount(server)
    const started = Date.now()
    const stuck = call(server, "GET", "/api/v1/leads", { auth: account.ownerKey })
    // Other requests are not held up meanwhile.
    const me = await call(server, "GET", "/api/me", { auth: account.ownerKey })
    expect(me.status).toBe(200)
    expect(Date.now() - started).toBeLessThan(900)

    const reply = await stuck
    const elapsed = Date.now() - started
    expect(reply.status).toBe(503)
    expect(reply.body).toEqual({ error: "The request took longer than 1 s", code: "service_unavailable" })
    expect(reply.headers.get("x-request-id")).toMatch(/^req_/)
    expect(elapsed).toBeGreaterThanOrEqual(950)
    expect(elapsed).toBeLessThan(5000)

    const created = await call(server, "POST", "/api/v1/leads", {
      auth: account.ownerKey,
      json: { name: "After the timeout", phone: "+14155550142" }
    })
    expect(created.status).toBe(201)
  })
})

// On PostgreSQL a statement can be made slow without holding up this process (PGlite runs
// in it, where a sleeping statement would stop the timer too).
const database = await TestDatabase.make()
if (database.kind === "postgres") {
  describe(`the request timeout on ${database.label}`, () => {
    const scope = Effect.runSync(Scope.make())
    let sqlServer: TestServer.Running
    let run: <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => Promise<A>
    beforeAll(async () => {
      const context = await Effect.runPromise(Layer.buildWithScope(SqlApp.layer(database.config), scope))
      run = (effect) => Effect.runPromise(Effect.provide(effect, context))
      await run(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.andThen(
            sql`CREATE FUNCTION slow_lead() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(3); RETURN NEW; END $$`,
            sql`CREATE TRIGGER slow BEFORE INSERT ON leads FOR EACH ROW WHEN (NEW.name = 'slow') EXECUTE FUNCTION slow_lead()`
          )
        )
      )
      sqlServer = await TestServer.start({ app: Layer.succeedContext(context), requestTimeoutSeconds: 1 })
    })
    afterAll(async () => {
      await sqlServer?.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await database.dispose()
    })

    it("answers 503 and rolls the create back: no lead, no event, no stored idempotent answer", async () => {
      const account = await makeAccount(sqlServer)
      const reply = await call(sqlServer, "POST", "/api/v1/leads", {
        auth: account.ownerKey,
        json: { name: "slow", phone: "+14155550143" },
        headers: { "idempotency-key": "slow-one" }
      })
      expect(reply.status).toBe(503)
      expect(reply.body).toEqual({ error: "The request took longer than 1 s", code: "service_unavailable" })
      // Past the sleep: had the transaction gone on, it would have committed by now.
      await new Promise((resolve) => setTimeout(resolve, 3000))
      const rows = await run(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ leads: number; events: number; keys: number }>`
            SELECT (SELECT count(*)::int FROM leads WHERE name = 'slow') AS leads,
                   (SELECT count(*)::int FROM events WHERE payload->'data'->>'name' = 'slow') AS events,
                   (SELECT count(*)::int FROM idempotency_keys WHERE key = 'slow-one') AS keys`
        )
      )
      expect(rows).toEqual([{ leads: 0, events: 0, keys: 0 }])
      const list = await call(sqlServer, "GET", "/api/v1/leads", { auth: account.ownerKey })
      expect(list.body.meta.total).toBe(0)
    }, 20_000)
  })
} else {
  console.log("request timeout on SQL: needs TEST_DATABASE_URL (PGlite runs in this process)")
  await database.dispose()
}
