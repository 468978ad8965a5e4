import { Effect, ManagedRuntime } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "@leadline/sql-adapter/Database"
import { LeadsRepo } from "@leadline/core/leads/LeadsRepo"
import type * as LeadSearch from "@leadline/core/leads/LeadSearch"
import * as SqlLeads from "@leadline/sql-adapter/leads/SqlLeads"
import * as TestDatabase from "../src/TestDatabase.ts"

const ACCOUNT = "00000000-0000-4000-8000-000000000001"
const ROWS = 50_000

let database: TestDatabase.TestDatabase
let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => runtime.runPromise(effect)

beforeAll(async () => {
  database = await TestDatabase.make()
  runtime = ManagedRuntime.make(Database.layer(database.config))
  await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO accounts (id, name, owner_user_id, plan_id, subscription_status, created_at)
                 VALUES (${ACCOUNT}::uuid, 'Big', gen_random_uuid(), 'free', 'active', now())`
      yield* sql.unsafe(`
        INSERT INTO leads (account_id, id, name, phone, email, tags, status, assigned_user_id, attributes, created_at, updated_at)
        SELECT '${ACCOUNT}'::uuid, 'ld_' || lpad(i::text, 26, '0'), 'Lead ' || i, '+1415' || lpad(i::text, 7, '0'),
               NULL, '[]'::jsonb, 'new', NULL, '{}'::jsonb,
               timestamptz '2026-01-01' + i * interval '1 second', timestamptz '2026-01-01' + i * interval '1 second'
        FROM generate_series(1, ${ROWS}) AS i`)
      yield* sql`INSERT INTO lead_counts (account_id, total) VALUES (${ACCOUNT}::uuid, ${ROWS}::int)`
      yield* sql`ANALYZE leads`
    })
  )
}, 120_000)
afterAll(async () => {
  await runtime?.dispose()
  await database?.dispose()
})

describe(`the first page of an account with many leads (${ROWS.toLocaleString("en")} here)`, () => {
  it("reads the newest rows off the index and stops, without sorting or counting the account", async () => {
    const plan = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [statement, params] = SqlLeads.pageQuery(sql, ACCOUNT, { limit: 50, offset: 0 }).compile()
        const rows = yield* sql.unsafe<{ "QUERY PLAN": unknown }>(`EXPLAIN (FORMAT JSON) ${statement}`, params)
        const raw = rows[0]!["QUERY PLAN"]
        return JSON.stringify(typeof raw === "string" ? JSON.parse(raw) : raw)
      })
    )
    expect(plan).toContain('"Node Type":"Limit"')
    expect(plan).toContain('"Index Name":"leads_newest_first"')
    expect(plan).not.toContain('"Node Type":"Sort"')
    expect(plan).not.toContain('"Node Type":"Aggregate"')
  })

  it("returns the newest 50 and the total kept in lead_counts", async () => {
    const page = await run(
      Effect.gen(function* () {
        const repo = yield* LeadsRepo
        return yield* repo.list(ACCOUNT, { limit: 50, offset: 0 })
      }).pipe(Effect.provide(SqlLeads.layer))
    )
    expect(page.total).toBe(ROWS)
    expect(page.items).toHaveLength(50)
    expect(page.items[0]!.id).toBe(`ld_${String(ROWS).padStart(26, "0")}`)
    expect(page.items[49]!.id).toBe(`ld_${String(ROWS - 49).padStart(26, "0")}`)
  })
})

describe("finding leads in an account with many (the plans of GET /api/v1/leads's searches)", () => {
  const none = { prefix: undefined, phoneDigits: undefined, statuses: [], tags: [], assignedUserId: undefined }
  const filter: LeadSearch.LeadFilter = {
    ...none,
    createdAfter: undefined,
    createdBefore: undefined,
    updatedAfter: undefined
  }
  const anchor = (n: number) =>
    ({ id: `ld_${String(n).padStart(26, "0")}` }) as unknown as Parameters<typeof LeadSearch.pageOf>[0][number]
  const planOf = (search: LeadSearch.LeadSearch, narrow = false) =>
    run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [statement, params] = SqlLeads.searchQuery(sql, ACCOUNT, search, narrow).compile()
        const rows = yield* sql.unsafe<{ "QUERY PLAN": unknown }>(`EXPLAIN (FORMAT JSON) ${statement}`, params)
        const raw = rows[0]!["QUERY PLAN"]
        return JSON.stringify(typeof raw === "string" ? JSON.parse(raw) : raw)
      })
    )

  it.each([
    ["a deep page by name, after a cursor", { key: "name", descending: false }, "leads_by_name"],
    [
      "a deep page of the recently changed, after a cursor",
      { key: "updated_at", descending: true },
      "leads_recently_updated"
    ],
    ["a deep page newest first, after a cursor", { key: "created_at", descending: true }, "leads_newest_first"]
  ] as const)("walks an index from the cursor, without sorting: %s", async (_, order, index) => {
    const plan = await planOf({ filter, order, window: { by: "after", anchor: anchor(25_000) }, limit: 50 })
    expect(plan).toContain(`"Index Name":"${index}"`)
    expect(plan).not.toContain('"Node Type":"Sort"')
    expect(plan).not.toContain('"Node Type":"Seq Scan"')
  })

  it("reads a narrow search's matches out of the name, email and phone indexes and sorts them, not walking the account", async () => {
    const plan = await planOf(
      {
        filter: { ...filter, prefix: "+1415000012", phoneDigits: "1415000012" },
        order: { key: "created_at", descending: true },
        window: { by: "offset", offset: 0 },
        limit: 50
      },
      true
    )
    expect(plan).toContain('"Index Name":"leads_by_phone"')
    expect(plan).toContain('"Index Name":"leads_by_name"')
    expect(plan).toContain('"Index Name":"leads_by_email"')
    expect(plan).not.toContain('"Index Name":"leads_newest_first"')
    expect(plan).not.toContain('"Node Type":"Seq Scan"')
  })

  it("counts a search's matches in the indexes alone, up to one past the narrow bound", async () => {
    const count = (prefix: string, phoneDigits: string | undefined) =>
      run(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const query = SqlLeads.matchesQuery(sql, ACCOUNT, { ...filter, prefix, phoneDigits })
          const [statement, params] = query.compile()
          const [plan] = yield* sql.unsafe<{ "QUERY PLAN": unknown }>(`EXPLAIN (FORMAT JSON) ${statement}`, params)
          const [row] = yield* query
          return { matches: Number(row!.matches), plan: JSON.stringify(plan!["QUERY PLAN"]) }
        })
      )
    // "+1415000012" starts the phones of leads 120 to 129; no name or email starts with it.
    const narrow = await count("+1415000012", "1415000012")
    expect(narrow.matches).toBe(10)
    expect(narrow.plan).toContain('"Node Type":"Index Only Scan"')
    expect(narrow.plan).not.toContain('"Node Type":"Seq Scan"')
    expect(narrow.plan).not.toContain('"Node Type":"Index Scan"')
    // "lead 1" starts 11,111 names: counted no further than the bound.
    const broad = await count("lead 1", undefined)
    expect(broad.matches).toBe(SqlLeads.NARROW_SEARCH + 1)
    expect(broad.plan).not.toContain('"Node Type":"Index Scan"')
  })

  it.each([
    ["", undefined],
    ["lead 12", "lead 13"],
    ["+1415", "+1416"],
    ["az", "a{"],
    ["\u{10FFFF}", undefined],
    ["a\u{10FFFF}", "b"],
    ["\u{D7FF}", "\u{E000}"]
  ] as const)("ends the range of strings that start with %j before %j", (prefix, end) => {
    expect(SqlLeads.after(prefix)).toBe(end)
  })

  it("answers a search as the memory store does", async () => {
    const found = await run(
      Effect.gen(function* () {
        const repo = yield* LeadsRepo
        return yield* repo.search(ACCOUNT, {
          filter: { ...filter, prefix: "lead 4999", phoneDigits: undefined },
          order: { key: "name", descending: false },
          window: { by: "offset", offset: 0 },
          limit: 20
        })
      }).pipe(Effect.provide(SqlLeads.layer))
    )
    // "Lead 4999" and "Lead 49990" to "Lead 49999", in lower-case name order.
    expect(found.items.map((lead) => lead.name)).toEqual([
      "Lead 4999",
      ...Array.from({ length: 10 }, (_, i) => `Lead 4999${i}`)
    ])
    expect(found.hasMore).toBe(false)
  })

  it("pages a narrow search (fewer matches than the bound, read whole and sorted) as the memory store does", async () => {
    // "lead 49" starts 1,111 names (Lead 49, 490-499, 4900-4999, 49000-49999): under the bound, read whole.
    const expected = Array.from({ length: ROWS }, (_, i) => i + 1)
      .filter((n) => `lead ${n}`.startsWith("lead 49"))
      .sort((a, b) => b - a)
      .map((n) => `Lead ${n}`)
    expect(expected.length).toBeLessThanOrEqual(SqlLeads.NARROW_SEARCH)
    const search = (window: LeadSearch.LeadSearch["window"]) =>
      run(
        Effect.gen(function* () {
          const repo = yield* LeadsRepo
          return yield* repo.search(ACCOUNT, {
            filter: { ...filter, prefix: "lead 49", phoneDigits: undefined },
            order: { key: "created_at", descending: true },
            window,
            limit: 25
          })
        }).pipe(Effect.provide(SqlLeads.layer))
      )
    const first = await search({ by: "offset", offset: 0 })
    expect(first.items.map((lead) => lead.name)).toEqual(expected.slice(0, 25))
    expect(first.hasMore).toBe(true)
    const deep = await search({ by: "offset", offset: 1100 })
    expect(deep.items.map((lead) => lead.name)).toEqual(expected.slice(1100))
    expect(deep.hasMore).toBe(false)
    const next = await search({ by: "after", anchor: first.items.at(-1)! })
    expect(next.items.map((lead) => lead.name)).toEqual(expected.slice(25, 50))
    const back = await search({ by: "before", anchor: next.items[0]! })
    expect(back.items.map((lead) => lead.name)).toEqual(expected.slice(0, 25))
    expect(back.hasMore).toBe(false)
  })

  it("answers a broad search (more matches than it sorts whole) as the memory store does, by offset and by cursor", async () => {
    // "lead 1…" matches 11,111 of the 50,000: the list is walked in its order instead.
    const expected = Array.from({ length: ROWS }, (_, i) => ({ n: i + 1, name: `Lead ${i + 1}` }))
      .filter((lead) => lead.name.toLowerCase().startsWith("lead 1"))
      .sort((a, b) =>
        a.name.toLowerCase() < b.name.toLowerCase() ? -1 : a.name.toLowerCase() > b.name.toLowerCase() ? 1 : a.n - b.n
      )
    const search = (window: LeadSearch.LeadSearch["window"]) =>
      run(
        Effect.gen(function* () {
          const repo = yield* LeadsRepo
          return yield* repo.search(ACCOUNT, {
            filter: { ...filter, prefix: "lead 1", phoneDigits: undefined },
            order: { key: "name", descending: false },
            window,
            limit: 20
          })
        }).pipe(Effect.provide(SqlLeads.layer))
      )
    const first = await search({ by: "offset", offset: 0 })
    expect(first.items.map((lead) => lead.name)).toEqual(expected.slice(0, 20).map((lead) => lead.name))
    expect(first.hasMore).toBe(true)
    const next = await search({ by: "after", anchor: first.items.at(-1)! })
    expect(next.items.map((lead) => lead.name)).toEqual(expected.slice(20, 40).map((lead) => lead.name))
  })
})
