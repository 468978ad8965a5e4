import { Effect, Exit, Layer, Scope } from "effect"
import { OpenApi } from "effect/http-api"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Api } from "@leadline/http-adapter/Api"
import * as Migrations from "@leadline/sql-adapter/Migrations"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as Coverage from "../src/Coverage.ts"
import * as Resource from "../src/Resource.ts"
import * as Resources from "../src/Resources.ts"
import * as TestDatabase from "../src/TestDatabase.ts"

/**
 * Coverage by construction: the generated isolation, scope and fuzz-ledger tests
 * cover what the descriptors declare, so these fail when the API or the database
 * has something that no descriptor declares. Each check is also shown failing on
 * a made-up route, table or descriptor, so that it cannot pass by checking nothing.
 */

const document = OpenApi.fromApi(Api) as unknown as {
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>
}

const route = (
  method: Resource.Route["method"],
  path: string,
  extra: Partial<Resource.Route> = {}
): Resource.Route => ({
  method,
  path,
  needs: "any key",
  succeeds: 200,
  request: async () => ({ path }),
  ...extra
})

const descriptor = (name: string, fields: Partial<Resource.Resource> = {}): Resource.Resource => ({
  name,
  routes: [],
  ledger: { tables: [] },
  ...fields
})

/** A thing that can be made and read, for the made-up descriptors; never called. */
const thing: Resource.Isolation = {
  noun: "channel",
  make: async () => "ch_1",
  read: async () => ({}),
  unknownId: () => "ch_0"
}

describe("routes", () => {
  it("declares every operation of the API in exactly one descriptor, and no other", () => {
    const documented = Coverage.documentedRoutes(document)
    expect(documented.length).toBeGreaterThan(10)
    expect(Coverage.routeGaps(documented, Resources.all)).toEqual({
      undeclared: [],
      undocumented: [],
      duplicated: []
    })
  })

  it("finds an operation no descriptor declares, one the API lacks, and one declared twice", () => {
    const documented = [...Coverage.documentedRoutes(document), "GET /api/v1/gadgets", "POST /api/v1/gadgets"]
    const extra = descriptor("gadgets", { routes: [route("POST", "/api/v1/gadgets"), route("GET", "/api/v1/leads")] })
    expect(Coverage.routeGaps(documented, [...Resources.all, extra])).toEqual({
      undeclared: ["GET /api/v1/gadgets"],
      undocumented: [],
      duplicated: ["GET /api/v1/leads"]
    })
    expect(Coverage.routeGaps(Coverage.documentedRoutes(document), [...Resources.all, extra]).undocumented).toEqual([
      "POST /api/v1/gadgets"
    ])
  })

  it("has an addressing request for every API operation that takes an id", () => {
    expect(Coverage.addressGaps(document, Resources.all)).toEqual([])
  })

  it("finds an operation that takes an id but whose descriptor cannot address a thing", () => {
    const paths = {
      ...document.paths,
      "/api/v1/gadgets/{id}": { get: { parameters: [{ name: "id", in: "path" }] } },
      "/api/v1/gadgets": { delete: { parameters: [{ name: "id", in: "query" }] } }
    }
    const extra = descriptor("gadgets", {
      routes: [route("GET", "/api/v1/gadgets/{id}"), route("DELETE", "/api/v1/gadgets")],
      isolation: thing
    })
    expect(Coverage.addressGaps({ paths }, [...Resources.all, extra])).toEqual([
      "GET /api/v1/gadgets/{id} takes an id but its descriptor has no `addresses`",
      "DELETE /api/v1/gadgets takes an id but its descriptor has no `addresses`"
    ])
  })
})

describe("isolation", () => {
  it("gives every descriptor an isolation case, or an exemption no API key gets past", () => {
    expect(Coverage.isolationGaps(Resources.all)).toEqual([])
    const exempt = Resources.all.filter((resource) => Resource.isExempt(resource.isolation)).map((r) => r.name)
    expect(exempt.sort()).toEqual(["idempotency keys", "operator API"])
  })

  it("finds a descriptor without a case, an exemption an API key gets past, and a case that checks nothing", () => {
    const gadgets = descriptor("gadgets", { routes: [route("GET", "/api/v1/gadgets")] })
    const orders = descriptor("orders", { routes: [route("POST", "/api/v1/orders")], isolation: { exempt: "later" } })
    const agents = descriptor("agents", { routes: [route("POST", "/api/v1/agents")], isolation: thing })
    expect(Coverage.isolationGaps([...Resources.all, gadgets, orders, agents])).toEqual([
      "gadgets has no isolation case",
      'orders is exempt from isolation ("later"), but an API key reaches POST /api/v1/orders',
      "agents's isolation case checks nothing: no API route addresses its things or reads them"
    ])
  })

  it("names each descriptor once, as the fuzz ledger keys on the name", () => {
    const names = Resources.all.map((resource) => resource.name)
    expect(new Set(names).size).toBe(names.length)
  })
})

describe("tables of the migrated database", () => {
  let database: TestDatabase.TestDatabase
  const scope = Effect.runSync(Scope.make())
  let query: <A extends object>(statement: string) => Promise<ReadonlyArray<A>>

  beforeAll(async () => {
    database = await TestDatabase.make()
    // Building the SQL wiring runs every migration.
    const context = await Effect.runPromise(Layer.buildWithScope(SqlApp.layer(database.config), scope))
    query = <A extends object>(statement: string) =>
      Effect.runPromise(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          return yield* sql.unsafe<A>(statement)
        }).pipe(Effect.provide(context))
      )
  })
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await database?.dispose()
  })

  const tables = async () =>
    (
      await query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
      )
    ).map((row) => row.table_name)

  const gaps = async () => Coverage.tableGaps(await tables(), Resources.all, Resources.globalTables, [Migrations.TABLE])

  it("puts every table (but the migrations' own) in a descriptor's fuzz ledger or the list of global tables", async () => {
    expect((await tables()).length).toBeGreaterThan(5)
    expect(await gaps()).toEqual({ unledgered: [], unknown: [], duplicated: [] })
  })

  it("finds a table that a migration adds and no ledger names, until it is listed", async () => {
    await query("CREATE TABLE zz_gadgets (account_id uuid NOT NULL, id text NOT NULL, PRIMARY KEY (account_id, id))")
    try {
      expect((await gaps()).unledgered).toEqual(["zz_gadgets"])
      const listed = Coverage.tableGaps(
        await tables(),
        Resources.all,
        [...Resources.globalTables, { table: "zz_gadgets", reason: "a made-up global lookup" }],
        [Migrations.TABLE]
      )
      expect(listed).toEqual({ unledgered: [], unknown: [], duplicated: [] })
    } finally {
      await query("DROP TABLE zz_gadgets")
    }
  })

  it("finds a ledger table that the database does not have, and one named twice", () => {
    const extra = descriptor("gadgets", {
      ledger: {
        tables: [
          { name: "gadgets", account: "account_id", rows: Resource.uncounted("made up") },
          { name: "leads", account: "account_id", rows: Resource.uncounted("made up") }
        ]
      }
    })
    const present = ["accounts", "leads", Migrations.TABLE]
    const found = Coverage.tableGaps(present, [extra, ...Resources.all], [], [Migrations.TABLE])
    expect(found.unknown).toContain("gadgets")
    expect(found.duplicated).toEqual(["leads"])
  })
})
