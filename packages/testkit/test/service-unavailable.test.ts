import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { StoreUnavailable } from "@leadline/core/Errors"
import { LeadsRepo } from "@leadline/core/leads/LeadsRepo"
import * as Services from "@leadline/core/Services"
import * as Client from "@leadline/http-adapter/Client"
import * as MemoryStores from "@leadline/memory-adapter/MemoryStores"
import { makeAccount } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import * as TestServer from "../src/TestServer.ts"

// The in-memory stores, except that the leads store is away, as the SQL stores report an unreachable database.
const away = Effect.die(new StoreUnavailable({ message: "The database is unreachable" }))
const leadsAway = Layer.effect(
  LeadsRepo,
  Effect.map(LeadsRepo, (repo) => LeadsRepo.of({ ...repo, list: () => away, find: () => away, insert: () => away }))
)
const app = Services.layer.pipe(Layer.provideMerge(leadsAway.pipe(Layer.provideMerge(MemoryStores.layer))))

let server: TestServer.Running

beforeAll(async () => {
  server = await TestServer.start({ app })
})
afterAll(() => server?.close())

describe("503 service_unavailable", () => {
  it("is answered as JSON with Retry-After", async () => {
    const account = await makeAccount(server)
    const reply = await call(server, "GET", "/api/v1/leads", { auth: account.ownerKey })
    expect(reply.status).toBe(503)
    expect(reply.body).toEqual({ error: "The database is unreachable; retry shortly", code: "service_unavailable" })
    expect(reply.headers.get("retry-after")).toBe("1")
    expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
  })

  it("is declared, so the typed client decodes it as ServiceUnavailable", async () => {
    const account = await makeAccount(server)
    const withClient = <A, E>(use: (client: Client.Client) => Effect.Effect<A, E>) =>
      Effect.runPromise(
        Client.make({ baseUrl: server.baseUrl, apiKey: account.ownerKey }).pipe(
          Effect.flatMap(use),
          Effect.provide(FetchHttpClient.layer)
        )
      )
    const failures = await withClient((client) =>
      Effect.gen(function* () {
        return [
          yield* Effect.flip(client.leads.list({ query: {} })),
          yield* Effect.flip(client.leads.get({ params: { id: "ld_01jz0000000000000000000000" } })),
          yield* Effect.flip(client.leads.create({ payload: { name: "Away", phone: "+14155550199" }, headers: {} }))
        ]
      })
    )
    expect(failures).toHaveLength(3)
    for (const failure of failures) {
      expect(failure._tag).toBe("ServiceUnavailable")
      expect({ ...failure }).toEqual({
        error: "The database is unreachable; retry shortly",
        code: "service_unavailable"
      })
    }
  })
})
