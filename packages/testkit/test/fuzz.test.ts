import { Effect, Exit, Layer, Scope } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IMPORT_UPLOAD } from "@leadline/http-adapter/leads/LeadFiles"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as Admin from "../src/admin/AdminResource.ts"
import { type AccountFixture, makeAccount, makeUser } from "../src/Fixtures.ts"
import { FuzzLedger } from "../src/fuzz/FuzzLedger.ts"
import * as OpenApiDocument from "../src/fuzz/OpenApiDocument.ts"
import * as RawHttp from "../src/fuzz/RawHttp.ts"
import * as ReplyCheck from "../src/fuzz/ReplyCheck.ts"
import * as RequestArbitrary from "../src/fuzz/RequestArbitrary.ts"
import * as RequestBuilder from "../src/fuzz/RequestBuilder.ts"
import type { Mismatch } from "../src/fuzz/SchemaCheck.ts"
import * as Resource from "../src/Resource.ts"
import * as Resources from "../src/Resources.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * Property-based fuzzing of every operation in the server's own OpenAPI
 * document, on the in-memory wiring and on SQL. For each operation, on a fresh
 * account: hostile and valid requests never get a 5xx, every answer matches the
 * document, the account holds exactly the things that the 2xx answers said were
 * created (and not deleted), and on SQL each table gained the rows the answers
 * account for and no other account's rows changed. What is tracked and counted
 * comes from the resources' descriptors (`src/Resources.ts`, `FuzzLedger`).
 *
 * `FUZZ_RUNS` sets the runs per operation and wiring; `FUZZ_SEED` replays a
 * failure (fast-check prints the seed and path of the counterexample).
 */

// 200 runs of each operation of the document on both wirings: about half a second per operation and wiring on a 2-core machine.
const NUM_RUNS = Number(process.env.FUZZ_RUNS ?? 200)
const SEED = process.env.FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FUZZ_SEED) }
const TEST_TIMEOUT = 120_000

// Every host resolves to loopback, which the worker refuses: registered
// endpoints get real delivery attempts that fail at once, and nothing leaves the machine.
const offline = { resolver: { lookup: async () => [{ address: "127.0.0.1", family: 4 }] } }

// The document is the same on every wiring; it is read first because the tests are named after its operations.
// Url sources stay `processing`, lead jobs stay `queued` and queued messages stay queued: a fetch's event, a job's leads, and the events of a
// message's send and statuses, come after the answer, out of the ledger's sight.
const quiet = { webhooks: offline, knowledgeFetcher: false, leadJobs: false, messaging: { sender: false } } as const
const memory = await TestServer.start(quiet)
const document = await OpenApiDocument.readDocument(memory.baseUrl)
const OPERATIONS = OpenApiDocument.operations(document)

const jsonOf = (reply: RawHttp.Reply): any => JSON.parse(reply.text)

/** The ledger of the descriptors: what the answers made, removed and wrote. */
const newLedger = () => new FuzzLedger(Resources.all)

/** Rows per table and owning account (`""` for a table without an account column). */
type RowCounts = Map<string, Map<string, number>>

const operation = (key: string) => OPERATIONS.find((candidate) => candidate.key === key)!

/** For each operation that takes a file, the one whose body its rows are checked as: an import's, a create's. */
const ROWS_CHECKED_AS: Readonly<Record<string, string>> = {
  "POST /api/v1/leads/imports": "POST /api/v1/leads"
}

/** Every route the descriptors declare. */
const ROUTES = Resources.all.flatMap((resource) => resource.routes)

/** One account to fuzz, with keys to probe 401 and 403 and a few resources for the ids to hit. */
interface World {
  readonly account: AccountFixture
  readonly ledger: FuzzLedger
  readonly knownIds: RequestArbitrary.KnownIds
  readonly credentials: (operation: OpenApiDocument.Operation) => ReadonlyArray<RequestArbitrary.Credential>
  readonly hints: Readonly<Record<string, fc.Arbitrary<unknown>>>
}

const bearer = (label: string, token: string): RequestArbitrary.Credential => ({
  label,
  authorization: `Bearer ${token}`
})

const makeWorld = async (server: TestServer.Running): Promise<World> => {
  const account = await makeAccount(server, {
    // `auditor` reads the store at the end and is never sent by the fuzzer; `spare` is the key the
    // admin routes may change or revoke.
    keys: { auditor: [], reader: ["leads:read"], spare: ["leads:write"], revoked: [] }
  })
  const member = await makeUser(server, account.accountId, "member")
  const revoke = await RawHttp.send(server.baseUrl, {
    method: "DELETE",
    path: `/admin/v1/keys/${account.keys.revoked!.id}`,
    headers: { authorization: `Bearer ${server.adminToken}` },
    body: undefined,
    chunked: false
  })
  expect(revoke.status).toBe(200)
  const ledger = newLedger()
  ledger.see(Admin.resource.name, account.accountId)
  const seeded = await seed(server, account, ledger)

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
  // Only these keys may be changed or revoked: the fuzzer sends the owner's, and the auditor reads the store at the end.
  const keyIds = [account.keys.spare!.id, account.keys.reader!.id]
  const users = fc.constantFrom(account.ownerUserId, member)
  return {
    account,
    ledger,
    knownIds: (op, name) => (name === "key_id" ? keyIds : ledger.knownIds(op, name)),
    credentials: (op) => (op.security.includes("adminToken") ? adminCredentials : apiCredentials),
    hints: withSeeded(
      {
        phone: phoneArbitrary,
        email: fc.emailAddress(),
        url: fc.webUrl({ validSchemes: ["https"] }),
        user_id: users,
        assigned_user_id: users,
        // An import's columns: FileBodies' files have `notes` and `Phone Number` now and then; no file has `E-mail`;
        // no store keeps the last one's fields.
        mapping: fc.constantFrom(
          {},
          { phone: "Phone Number" },
          { "attributes.notes": "notes" },
          { name: "name", "attributes.source": "notes" },
          { email: "E-mail" },
          { "attributes.\u0000": "notes", "attributes.\ud800": "notes" }
        )
      },
      seeded
    )
  }
}

/**
 * The hints, each with the values the seed sent in its field mixed in: a request that
 * takes a seeded thing's phone gets the 409 (a PATCH too, which makes nothing to collide with).
 */
const withSeeded = (
  hints: Readonly<Record<string, fc.Arbitrary<unknown>>>,
  seeded: ReadonlyMap<string, ReadonlyArray<unknown>>
): Readonly<Record<string, fc.Arbitrary<unknown>>> =>
  Object.fromEntries(
    Object.entries(hints).map(([field, hint]) => {
      const values = seeded.get(field) ?? []
      return [
        field,
        values.length === 0
          ? hint
          : fc.oneof({ weight: 2, arbitrary: hint }, { weight: 1, arbitrary: fc.constantFrom(...values) })
      ]
    })
  )

/** Valid numbers, few enough that some repeat for 409s, in two spellings. */
const phoneArbitrary = fc
  .tuple(fc.integer({ min: 0, max: 40 }), fc.boolean())
  .map(([line, spaced]) => `${spaced ? "+1 415-555 " : "+1415555"}${String(line).padStart(4, "0")}`)

/** How many of its things the seed makes for each descriptor with a create route. */
const SEEDED = 3

/**
 * What the fuzzer aims its ids at, made through the API and recorded in the ledger like
 * any other answer. For every descriptor whose ledger names a create route: a few things,
 * each made by that route's own (valid) request, with the account's owner key or, on an
 * operator route, the admin token. Then one delivery, which no create route makes: an
 * endpoint listening for lead.deleted, and a seeded lead deleted (the ledger learns the
 * delivery's id from the log); and, for descriptors whose things come from outside the API,
 * what their `make` makes. Returns the top-level fields of the bodies the creates
 * sent, by name.
 */
const seed = async (
  server: TestServer.Running,
  account: AccountFixture,
  ledger: FuzzLedger
): Promise<ReadonlyMap<string, ReadonlyArray<unknown>>> => {
  const call = async (key: string, path: string, expected: number, body?: unknown, token = account.ownerKey) => {
    const reply = await RawHttp.send(server.baseUrl, {
      method: key.split(" ", 1)[0]!,
      path,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : new TextEncoder().encode(JSON.stringify(body)),
      chunked: false
    })
    expect(reply.status, `${key}: ${reply.text}`).toBe(expected)
    ledger.record(operation(key).key, reply)
    return jsonOf(reply)
  }
  const sent = new Map<string, Array<unknown>>()
  for (const resource of Resources.all) {
    const ids = resource.ledger.ids
    const create = ids?.create
    if (ids?.make !== undefined) {
      for (let n = 0; n < SEEDED; n++) ledger.see(resource.name, await ids.make({ target: server }, account))
      // Read back as their list shows them: the events of a change depend on the thing before it.
      if (ids.list !== undefined) await call(`GET ${ids.list.path}`, `${ids.list.path}?limit=100`, 200)
    }
    if (ids === undefined || create === undefined) continue
    const route = ROUTES.find((candidate) => Resource.routeName(candidate) === create)
    if (route === undefined) throw new Error(`${resource.name}: its ledger's create, ${create}, is no declared route`)
    const token = route.needs === "admin token" ? server.adminToken : account.ownerKey
    for (let n = 0; n < SEEDED; n++) {
      const request = await route.request({ target: server }, account)
      const made = await call(create, request.path, route.succeeds, request.json, token)
      expect(typeof made[ids.field], `${create}: the id in its answer's ${ids.field}`).toBe("string")
      for (const [field, value] of Object.entries(request.json ?? {})) {
        sent.set(field, [...(sent.get(field) ?? []), value])
      }
    }
  }
  await call("POST /api/webhooks/endpoints", "/api/webhooks/endpoints", 201, {
    url: "https://hooks.example.com/leadline",
    events: ["lead.deleted"]
  })
  const first = ledger.ids("leads")[0]
  expect(first, "a seeded lead to delete").toBeDefined()
  await call("DELETE /api/v1/leads/{id}", `/api/v1/leads/${first}`, 200)
  const log = await call("GET /api/webhooks/deliveries", "/api/webhooks/deliveries", 200)
  // The seeded endpoints listen for order.created too, so the seeded orders have deliveries of their own.
  expect(log.deliveries.filter((d: { event_type: string }) => d.event_type === "lead.deleted")).toHaveLength(1)
  return sent
}

/** Every id a list endpoint returns for the account, page by page, each page checked against the document. */
const listAll = async (
  server: TestServer.Running,
  key: string,
  list: { readonly path: string; readonly field: string },
  idField: string
): Promise<Array<string>> => {
  const listOperation = operation(`GET ${list.path}`)
  const ids: Array<string> = []
  for (let offset = 0; ; offset += 100) {
    const reply = await RawHttp.send(server.baseUrl, {
      method: "GET",
      path: `${list.path}?limit=100&offset=${offset}`,
      headers: { authorization: `Bearer ${key}` },
      body: undefined,
      chunked: false
    })
    expect(reply.status, reply.text).toBe(200)
    expect(ReplyCheck.checkReply(document, listOperation, reply)).toBeUndefined()
    const page = jsonOf(reply)
    ids.push(...page[list.field].map((item: Record<string, string>) => item[idField]!))
    if (!page.meta.has_more) return ids
  }
}

const failure = (request: RawHttp.HttpRequest, reply: RawHttp.Reply, mismatch: Mismatch) =>
  new Error(
    [
      `${mismatch.path}: ${mismatch.message}`,
      "--- request",
      RequestBuilder.describeRequest(request),
      `--- reply ${reply.status}`,
      reply.text.slice(0, 1000)
    ].join("\n")
  )

const fuzzOperation = async (
  server: TestServer.Running,
  op: OpenApiDocument.Operation,
  countRows: ((tables: ReadonlyArray<Resource.Table>) => Promise<RowCounts>) | undefined
) => {
  const world = await makeWorld(server)
  // A path parameter whose ids no descriptor's ledger names would only ever get made-up ids, and so
  // would any parameter a ledger names whose things the seed did not make.
  const named = (name: string) =>
    Resources.all.some(({ ledger }) =>
      ledger.ids?.parameters.some((key) => key === name || key === `${op.path} ${name}`)
    )
  for (const parameter of op.parameters.filter((p) => p.in === "path" || named(p.name))) {
    expect(world.knownIds(op, parameter.name), `ids known for ${parameter.name}`).not.toEqual([])
  }
  const tables = world.ledger.tables()
  const before = await countRows?.(tables)
  // Setting the world up went through the ledger too: only what the fuzzed requests wrote counts.
  const writtenBefore = new Map(world.ledger.written)
  const rowsAs = ROWS_CHECKED_AS[op.key]
  const cases = RequestArbitrary.caseArbitrary(document, op, {
    credentials: world.credentials(op),
    hints: world.hints,
    knownIds: world.knownIds,
    records:
      rowsAs === undefined
        ? undefined
        : RequestArbitrary.recordArbitrary(document, operation(rowsAs).requestBody!, world.hints)
  })
  const statuses = new Map<number, number>()
  await fc.assert(
    fc.asyncProperty(cases, async (fuzzCase) => {
      const request = RequestBuilder.materialize(op, fuzzCase, world.knownIds)
      const reply = await RawHttp.send(server.baseUrl, request)
      statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1)
      world.ledger.record(op.key, reply)
      const mismatch = ReplyCheck.checkReply(document, op, reply)
      if (mismatch !== undefined) throw failure(request, reply, mismatch)
      // The server runs in this process: a `__proto__` key that reached an object merge would show here.
      expect(Object.keys(Object.prototype)).toEqual([])
    }),
    { numRuns: NUM_RUNS, ...SEED }
  )
  if (op.files.length > 0 && NUM_RUNS >= 50) {
    // Its files got past the media type and the request's other checks to a job (its answer checked above), not only to 400s and 415s.
    const route = ROUTES.find((candidate) => `${candidate.method} ${candidate.path}` === op.key)!
    expect(
      statuses.get(route.succeeds) ?? 0,
      `answers by status: ${JSON.stringify(Object.fromEntries(statuses))}`
    ).toBeGreaterThan(0)
  }
  for (const resource of world.ledger.tracked()) {
    const ids = resource.ledger.ids!
    const stored = await listAll(server, world.account.keys.auditor!.apiKey, ids.list!, ids.field)
    expect(stored.toSorted(), `${resource.name} in the store`).toEqual(world.ledger.liveIds(resource.name).toSorted())
  }
  if (before !== undefined && countRows !== undefined) {
    // In the whole database, not just the account: a write to another account would show here.
    const after = await countRows(tables)
    const total = (counts: RowCounts, table: string) =>
      [...(counts.get(table)?.values() ?? [])].reduce((a, b) => a + b, 0)
    const counted = world.ledger.countedTables()
    const gained = Object.fromEntries(counted.map(({ name }) => [name, total(after, name) - total(before, name)]))
    const written = Object.fromEntries(
      counted.map(({ name }) => [name, world.ledger.written.get(name)! - writtenBefore.get(name)!])
    )
    expect(gained, "rows the database gained").toEqual(written)
    // Every table with an account column, counted or not: the rows of the accounts the answers did not concern stay as they were.
    const concerned = new Set(world.ledger.ids(Admin.resource.name))
    const others = (counts: RowCounts) =>
      Object.fromEntries(
        tables
          .filter((table) => table.account !== undefined)
          .map(({ name }) => [
            name,
            Object.fromEntries([...(counts.get(name) ?? new Map())].filter(([account]) => !concerned.has(account)))
          ])
      )
    expect(others(after), "rows of other accounts").toEqual(others(before))
  }
}

const fuzzWiring = (
  name: string,
  getServer: () => TestServer.Running,
  countRows?: (tables: ReadonlyArray<Resource.Table>) => Promise<RowCounts>
) =>
  describe(name, () => {
    it("finds operations to fuzz in the document", () => {
      expect(OPERATIONS.length).toBeGreaterThan(10)
    })
    for (const op of OPERATIONS) {
      it(op.key, () => fuzzOperation(getServer(), op, countRows), TEST_TIMEOUT)
    }
  })

afterAll(() => memory.close())

describe("the fuzzer's files", () => {
  it("go to each route the body guard takes a file on, as each type it takes, with rows as its rows are checked", () => {
    const files = OPERATIONS.filter((op) => op.files.length > 0)
    expect(files.map((op) => [op.key, op.files])).toEqual([[`POST ${IMPORT_UPLOAD.path}`, [...IMPORT_UPLOAD.types]]])
    for (const op of files) expect(operation(ROWS_CHECKED_AS[op.key]!).requestBody).toBeDefined()
  })
})

fuzzWiring("fuzz on the in-memory wiring", () => memory)

describe("on SQL", () => {
  let database: TestDatabase.TestDatabase
  let server: TestServer.Running
  // The stores are built here and handed to the server, so the test can count rows on the same database.
  const scope = Effect.runSync(Scope.make())
  let countRows: (tables: ReadonlyArray<Resource.Table>) => Promise<RowCounts>
  beforeAll(async () => {
    database = await TestDatabase.make()
    const context = await Effect.runPromise(Layer.buildWithScope(SqlApp.layer(database.config), scope))
    countRows = (tables) =>
      Effect.runPromise(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const counts: RowCounts = new Map()
          for (const table of tables) {
            const owner = table.account === undefined ? sql`''` : sql`${sql(table.account)}::text`
            const rows = yield* sql<{ account: string; n: number }>`
              SELECT ${owner} AS account, count(*)::int AS n FROM ${sql(table.name)} GROUP BY 1`
            counts.set(table.name, new Map(rows.map((row) => [row.account, row.n])))
          }
          return counts
        }).pipe(Effect.provide(context))
      )
    server = await TestServer.start({ ...quiet, app: Layer.succeedContext(context) })
  })
  afterAll(async () => {
    await server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await database?.dispose()
  })
  fuzzWiring(
    "fuzz",
    () => server,
    (tables) => countRows(tables)
  )
})
