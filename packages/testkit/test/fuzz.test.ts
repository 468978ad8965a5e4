import { Effect, Exit, Layer, Scope } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { type AccountFixture, makeAccount, makeUser } from "../src/Fixtures.ts"
import * as Fuzz from "../src/OpenApiFuzz.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * Property-based fuzzing of every operation in the server's own OpenAPI
 * document, on the in-memory wiring and on SQL. For each operation, on a fresh
 * account: hostile and valid requests never get a 5xx, every answer matches the
 * document, and the account holds exactly the leads and webhook endpoints that
 * the 2xx answers said were created (and not deleted).
 *
 * `FUZZ_RUNS` sets the runs per operation and wiring; `FUZZ_SEED` replays a
 * failure (fast-check prints the seed and path of the counterexample).
 */

// 200 runs of each of the 18 operations on both wirings: about 20 s on a 2-core machine.
const NUM_RUNS = Number(process.env.FUZZ_RUNS ?? 200)
const SEED = process.env.FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FUZZ_SEED) }
const TEST_TIMEOUT = 120_000

// Every host resolves to loopback, which the worker refuses: registered
// endpoints get real delivery attempts that fail at once, and nothing leaves the machine.
const offline = { resolver: { lookup: async () => [{ address: "127.0.0.1", family: 4 }] } }

// The document is the same on every wiring; it is read first because the tests are named after its operations.
const memory = await TestServer.start({ webhooks: offline })
const document = await Fuzz.readDocument(memory.baseUrl)
const OPERATIONS = Fuzz.operations(document)

/** Resources whose every creation and removal the answers show, so the store can be checked against them. */
const TRACKED = [
  { list: "/api/v1/leads", field: "leads", create: "POST /api/v1/leads", remove: "DELETE /api/v1/leads/{id}" },
  {
    list: "/api/webhooks/endpoints",
    field: "endpoints",
    create: "POST /api/webhooks/endpoints",
    remove: "DELETE /api/webhooks/endpoints"
  }
] as const

type Tracked = (typeof TRACKED)[number]

const jsonOf = (reply: Fuzz.Reply): any => JSON.parse(reply.text)

/** The tables whose rows only answered creates (and deletes) may change. */
const TABLES = ["accounts", "users", "api_keys", "leads", "events", "webhook_endpoints"] as const
type RowCounts = Record<(typeof TABLES)[number], number>

/** What the answers said exists in the account, and every id ever seen (deleted ones make good 404 probes). */
class Ledger {
  readonly live = new Map<Tracked, Set<string>>(TRACKED.map((resource) => [resource, new Set()]))
  readonly seen = new Map<Tracked, Array<string>>(TRACKED.map((resource) => [resource, []]))
  /** Rows each table gained by the 2xx answers' account: what the database may hold beyond its start. */
  readonly written: Record<(typeof TABLES)[number], number> = {
    accounts: 0,
    users: 0,
    api_keys: 0,
    leads: 0,
    events: 0,
    webhook_endpoints: 0
  }

  record(operation: Fuzz.Operation, reply: Fuzz.Reply) {
    const fresh = reply.status >= 200 && reply.status < 300 && reply.headers["idempotent-replayed"] !== "true"
    if (fresh) {
      const w = this.written
      switch (operation.key) {
        case "POST /admin/v1/accounts":
          w.accounts++
          w.users++
          w.api_keys++
          break
        case "POST /admin/v1/accounts/{account_id}/users":
          w.users++
          break
        case "POST /admin/v1/accounts/{account_id}/keys":
          w.api_keys++
          break
        case "POST /api/v1/leads":
          w.leads++
          w.events++
          break
        case "DELETE /api/v1/leads/{id}":
          w.leads--
          w.events++
          break
        case "POST /api/webhooks/endpoints":
          // Deleted endpoints stay as rows (their deliveries keep their history).
          w.webhook_endpoints++
          break
      }
    }
    for (const resource of TRACKED) {
      // A replay creates nothing: it repeats the answer of a request already counted.
      if (
        operation.key === resource.create &&
        reply.status === 201 &&
        reply.headers["idempotent-replayed"] !== "true"
      ) {
        const id = jsonOf(reply).id as string
        this.live.get(resource)!.add(id)
        this.seen.get(resource)!.push(id)
      }
      if (operation.key === resource.remove && reply.status === 200) this.live.get(resource)!.delete(jsonOf(reply).id)
    }
  }

  ids(field: Tracked["field"]): ReadonlyArray<string> {
    return this.seen.get(TRACKED.find((resource) => resource.field === field)!)!
  }
}

const operation = (key: string) => OPERATIONS.find((candidate) => candidate.key === key)!

/** One account to fuzz, with keys to probe 401 and 403 and a few resources for the ids to hit. */
interface World {
  readonly account: AccountFixture
  readonly ledger: Ledger
  readonly knownIds: Fuzz.KnownIds
  readonly credentials: (operation: Fuzz.Operation) => ReadonlyArray<Fuzz.Credential>
  readonly hints: Readonly<Record<string, fc.Arbitrary<unknown>>>
}

const bearer = (label: string, token: string): Fuzz.Credential => ({ label, authorization: `Bearer ${token}` })

const makeWorld = async (server: TestServer.Running): Promise<World> => {
  const account = await makeAccount(server, {
    // `auditor` reads the store at the end and is never sent by the fuzzer; `spare` is the key the
    // admin routes may change or revoke.
    keys: { auditor: [], reader: ["leads:read"], spare: ["leads:write"], revoked: [] }
  })
  const member = await makeUser(server, account.accountId, "member")
  const revoke = await Fuzz.send(server.baseUrl, {
    method: "DELETE",
    path: `/admin/v1/keys/${account.keys.revoked!.id}`,
    headers: { authorization: `Bearer ${server.adminToken}` },
    body: undefined,
    chunked: false
  })
  expect(revoke.status).toBe(200)
  const ledger = new Ledger()
  const deliveries = await seed(server, account, ledger)

  const adminCredentials = [
    bearer("admin", server.adminToken),
    { label: "none", authorization: undefined },
    bearer("api key on an admin route", account.ownerKey),
    bearer("unknown admin token", `lla_${"x".repeat(43)}`)
  ]
  const apiCredentials = [
    bearer("owner", account.ownerKey),
    bearer("reader (leads:read)", account.keys.reader!.apiKey),
    bearer("revoked", account.keys.revoked!.apiKey),
    bearer("unknown key", `lk_${"A".repeat(43)}`),
    bearer("admin token on an API route", server.adminToken),
    { label: "none", authorization: undefined },
    { label: "empty bearer", authorization: "Bearer " },
    { label: "basic", authorization: "Basic Zm9vOmJhcg==" }
  ]
  // By "path name" for a parameter of one operation, by name alone for one that means the same everywhere.
  const ids = new Map<string, () => ReadonlyArray<string>>([
    ["/api/v1/leads/{id} id", () => ledger.ids("leads")],
    ["/api/webhooks/endpoints id", () => ledger.ids("endpoints")],
    ["/api/webhooks/deliveries endpoint_id", () => ledger.ids("endpoints")],
    ["/api/webhooks/deliveries/redeliver id", () => deliveries],
    ["account_id", () => [account.accountId]],
    ["key_id", () => [account.keys.spare!.id, account.keys.reader!.id]]
  ])
  const users = fc.constantFrom(account.ownerUserId, member)
  return {
    account,
    ledger,
    knownIds: (op, name) => (ids.get(`${op.path} ${name}`) ?? ids.get(name))?.() ?? [],
    credentials: (op) => (op.security.includes("adminToken") ? adminCredentials : apiCredentials),
    hints: {
      phone: phoneArbitrary,
      email: fc.emailAddress(),
      url: fc.webUrl({ validSchemes: ["https"] }),
      user_id: users,
      assigned_user_id: users
    }
  }
}

/** Valid numbers, few enough that some repeat (and some are the seeded ones) for 409s, in two spellings. */
const phoneArbitrary = fc
  .tuple(fc.integer({ min: 0, max: 40 }), fc.boolean())
  .map(([line, spaced]) => `${spaced ? "+1 415-555 " : "+1415555"}${String(line).padStart(4, "0")}`)

/**
 * Three leads and an endpoint through the API (counted in the ledger like any
 * other answer), and one delivery, made by deleting a lead the endpoint listens for.
 */
const seed = async (server: TestServer.Running, account: AccountFixture, ledger: Ledger): Promise<Array<string>> => {
  const call = async (key: string, path: string, expected: number, body?: unknown) => {
    const reply = await Fuzz.send(server.baseUrl, {
      method: key.split(" ", 1)[0]!,
      path,
      headers: { authorization: `Bearer ${account.ownerKey}`, "content-type": "application/json" },
      body: body === undefined ? undefined : new TextEncoder().encode(JSON.stringify(body)),
      chunked: false
    })
    expect(reply.status, `${key}: ${reply.text}`).toBe(expected)
    ledger.record(operation(key), reply)
    return jsonOf(reply)
  }
  for (const line of ["0001", "0002", "0003"]) {
    await call("POST /api/v1/leads", "/api/v1/leads", 201, { name: "Seed", phone: `+1415555${line}` })
  }
  await call("POST /api/webhooks/endpoints", "/api/webhooks/endpoints", 201, {
    url: "https://hooks.example.com/leadline",
    events: ["lead.deleted"]
  })
  const first = ledger.ids("leads")[0]
  await call("DELETE /api/v1/leads/{id}", `/api/v1/leads/${first}`, 200)
  const log = await call("GET /api/webhooks/deliveries", "/api/webhooks/deliveries", 200)
  return log.deliveries.map((delivery: { id: string }) => delivery.id)
}

/** Every id a list endpoint returns for the account, page by page, each page checked against the document. */
const listAll = async (server: TestServer.Running, key: string, resource: Tracked): Promise<Array<string>> => {
  const list = operation(`GET ${resource.list}`)
  const ids: Array<string> = []
  for (let offset = 0; ; offset += 100) {
    const reply = await Fuzz.send(server.baseUrl, {
      method: "GET",
      path: `${resource.list}?limit=100&offset=${offset}`,
      headers: { authorization: `Bearer ${key}` },
      body: undefined,
      chunked: false
    })
    expect(reply.status, reply.text).toBe(200)
    expect(Fuzz.checkReply(document, list, reply)).toBeUndefined()
    const page = jsonOf(reply)
    ids.push(...page[resource.field].map((item: { id: string }) => item.id))
    if (!page.meta.has_more) return ids
  }
}

const failure = (request: Fuzz.HttpRequest, reply: Fuzz.Reply, mismatch: Fuzz.Mismatch) =>
  new Error(
    [
      `${mismatch.path}: ${mismatch.message}`,
      "--- request",
      Fuzz.describeRequest(request),
      `--- reply ${reply.status}`,
      reply.text.slice(0, 1000)
    ].join("\n")
  )

const fuzzOperation = async (
  server: TestServer.Running,
  op: Fuzz.Operation,
  countRows: (() => Promise<RowCounts>) | undefined
) => {
  const world = await makeWorld(server)
  const before = await countRows?.()
  // Setting the world up went through the ledger too: only what the fuzzed requests wrote counts.
  const writtenBefore = { ...world.ledger.written }
  const cases = Fuzz.caseArbitrary(document, op, {
    credentials: world.credentials(op),
    hints: world.hints,
    knownIds: world.knownIds
  })
  await fc.assert(
    fc.asyncProperty(cases, async (fuzzCase) => {
      const request = Fuzz.materialize(op, fuzzCase, world.knownIds)
      const reply = await Fuzz.send(server.baseUrl, request)
      world.ledger.record(op, reply)
      const mismatch = Fuzz.checkReply(document, op, reply)
      if (mismatch !== undefined) throw failure(request, reply, mismatch)
      // The server runs in this process: a `__proto__` key that reached an object merge would show here.
      expect(Object.keys(Object.prototype)).toEqual([])
    }),
    { numRuns: NUM_RUNS, ...SEED }
  )
  for (const resource of TRACKED) {
    const stored = await listAll(server, world.account.keys.auditor!.apiKey, resource)
    expect(stored.toSorted(), `${resource.field} in the store`).toEqual(
      [...world.ledger.live.get(resource)!].toSorted()
    )
  }
  if (before !== undefined && countRows !== undefined) {
    // In the whole database, not just the account: a write to another account would show here.
    const after = await countRows()
    const gained = Object.fromEntries(TABLES.map((table) => [table, after[table] - before[table]]))
    const written = Object.fromEntries(
      TABLES.map((table) => [table, world.ledger.written[table] - writtenBefore[table]])
    )
    expect(gained, "rows the database gained").toEqual(written)
  }
}

const fuzzWiring = (name: string, getServer: () => TestServer.Running, countRows?: () => Promise<RowCounts>) =>
  describe(name, () => {
    it("finds operations to fuzz in the document", () => {
      expect(OPERATIONS.length).toBeGreaterThan(10)
    })
    for (const op of OPERATIONS) {
      it(op.key, () => fuzzOperation(getServer(), op, countRows), TEST_TIMEOUT)
    }
  })

afterAll(() => memory.close())

fuzzWiring("fuzz on the in-memory wiring", () => memory)

describe("on SQL", () => {
  let database: TestDatabase.TestDatabase
  let server: TestServer.Running
  // The stores are built here and handed to the server, so the test can count rows on the same database.
  const scope = Effect.runSync(Scope.make())
  let countRows: () => Promise<RowCounts>
  beforeAll(async () => {
    database = await TestDatabase.make()
    const context = await Effect.runPromise(Layer.buildWithScope(SqlApp.layer(database.config), scope))
    countRows = () =>
      Effect.runPromise(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const counts = {} as RowCounts
          for (const table of TABLES) {
            const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`
            counts[table] = row!.n
          }
          return counts
        }).pipe(Effect.provide(context))
      )
    server = await TestServer.start({ app: Layer.succeedContext(context), webhooks: offline })
  })
  afterAll(async () => {
    await server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await database?.dispose()
  })
  fuzzWiring(
    "fuzz",
    () => server,
    () => countRows()
  )
})
