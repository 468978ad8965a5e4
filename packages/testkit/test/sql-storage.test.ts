import { createHash, randomUUID } from "node:crypto"
import { type Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IdempotencyStore, type StoredResponse } from "@leadline/core/idempotency/IdempotencyStore"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { makeAccount, makeKey } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

type Captured = SqlClient.SqlClient | IdempotencyStore

/**
 * What the SQL stores leave in the database, read back with SQL: expired
 * idempotency records purged, API keys kept only as hashes. Each database runs
 * the API server on the SQL wiring; the test reaches the same database (for
 * PGlite, the same in-process instance) through the server's own layer.
 */
const onDatabase = (name: string, postgres: "when-configured" | "never") =>
  describe(name, () => {
    let database: TestDatabase.TestDatabase
    let server: TestServer.Running
    let context: Context.Context<Captured>
    const run = <A>(effect: Effect.Effect<A, unknown, Captured>) =>
      Effect.runPromise(Effect.provideContext(effect, context))
    const rows = <A extends object>(statement: string, ...params: ReadonlyArray<unknown>) =>
      run(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          return yield* sql.unsafe<A>(statement, params)
        })
      )
    const store = <A>(use: (store: IdempotencyStore["Service"]) => Effect.Effect<A>) =>
      run(
        Effect.gen(function* () {
          return yield* use(yield* IdempotencyStore)
        })
      )

    beforeAll(async () => {
      database = await TestDatabase.make({ postgres })
      console.log(`sql storage: ${name}: ${database.label}`)
      const capture = Layer.effectDiscard(
        Effect.map(Effect.context<Captured>(), (captured) => {
          context = captured
        })
      )
      server = await TestServer.start({ app: capture.pipe(Layer.provideMerge(SqlApp.layer(database.config))) })
    })
    afterAll(async () => {
      await server?.close()
      await database?.dispose()
    })

    it("purges expired idempotency records and keeps live ones, answered or not", async () => {
      const t0 = Date.UTC(2001, 0, 1)
      const accounts = [randomUUID(), randomUUID()] as const
      const answer: StoredResponse = { status: 201, contentType: "application/json", body: '{"id":"ld_1"}' }
      const records = [
        { account: accounts[0], key: "expired-running", expiresAt: t0 + 1_000, completed: false },
        { account: accounts[0], key: "expired-answered", expiresAt: t0 + 2_000, completed: true },
        // Expiry is inclusive: a record that expires at `now` is gone.
        { account: accounts[1], key: "expires-now", expiresAt: t0 + 5_000, completed: true },
        { account: accounts[0], key: "live-running", expiresAt: t0 + 5_001, completed: false },
        { account: accounts[0], key: "live-answered", expiresAt: t0 + 86_400_000, completed: true },
        { account: accounts[1], key: "live-answered", expiresAt: t0 + 86_400_000, completed: true }
      ]
      await store((store) =>
        Effect.gen(function* () {
          for (const record of records) {
            const ref = { accountId: record.account, key: record.key }
            expect(yield* store.reserve(ref, `fp-${record.key}`, t0, record.expiresAt)).toEqual({ _tag: "Reserved" })
            if (record.completed) yield* store.complete(ref, answer)
          }
        })
      )
      type Row = { account_id: string; key: string; status: number | null; body: string | null }
      // Sorted here: the database's collation need not order uuids as JavaScript does.
      const sorted = (list: ReadonlyArray<Row>) =>
        [...list].sort((a, b) => (`${a.key} ${a.account_id}` < `${b.key} ${b.account_id}` ? -1 : 1))
      const stored = () =>
        rows<Row>(
          `SELECT account_id::text AS account_id, key, status, body FROM idempotency_keys
           WHERE account_id IN ($1::uuid, $2::uuid)`,
          ...accounts
        ).then(sorted)
      expect(await stored()).toHaveLength(6)

      const purged = await store((store) => store.purgeExpired(t0 + 5_000))
      expect(purged).toBe(3)
      expect(await stored()).toEqual(
        sorted([
          { account_id: accounts[0], key: "live-answered", status: 201, body: answer.body },
          { account_id: accounts[1], key: "live-answered", status: 201, body: answer.body },
          { account_id: accounts[0], key: "live-running", status: null, body: null }
        ])
      )
      // Nothing more to purge at the same instant, and a kept record still replays.
      expect(await store((store) => store.purgeExpired(t0 + 5_000))).toBe(0)
      const replay = await store((store) =>
        store.reserve({ accountId: accounts[0], key: "live-answered" }, "fp-live-answered", t0 + 6_000, t0 + 7_000)
      )
      expect(replay).toEqual({ _tag: "Completed", fingerprint: "fp-live-answered", response: answer })
    })

    it("stores API keys only as their SHA-256 hash: no plaintext key in any column", async () => {
      const account = await makeAccount(server)
      const scoped = await makeKey(server, account.accountId, { name: "dashboard", scopes: ["leads:read"] })
      const keys = [account.ownerKey, scoped.apiKey]
      const stored = await rows<Record<string, unknown>>(
        "SELECT * FROM api_keys WHERE account_id = $1::uuid ORDER BY created_at, id",
        account.accountId
      )
      expect(stored).toHaveLength(2)
      for (const apiKey of keys) {
        expect(apiKey).toMatch(/^lk_[A-Za-z0-9_-]{43}$/)
        const hash = createHash("sha256").update(apiKey).digest("hex")
        const row = stored.find((candidate) => candidate.hash === hash)
        expect(row, "a row whose hash is sha256(key)").toBeDefined()
        expect(row!.prefix).toBe(apiKey.slice(0, 9))
        // The part of the key after the visible prefix, whole or in any 10-character piece, in no column.
        const hidden = apiKey.slice(9)
        const pieces = Array.from({ length: hidden.length - 9 }, (_, start) => hidden.slice(start, start + 10))
        for (const [column, value] of Object.entries(row!)) {
          const text = value instanceof Date ? value.toISOString() : JSON.stringify(value)
          expect(text, column).not.toContain(apiKey)
          for (const piece of pieces) expect(text.includes(piece), `${column} holds part of the key`).toBe(false)
        }
      }
      expect(stored.find((row) => row.hash === createHash("sha256").update(scoped.apiKey).digest("hex"))?.id).toBe(
        scoped.id
      )
      // The hash is what authenticates: the key still works.
      expect((await call(server, "GET", "/api/me", { auth: scoped.apiKey })).status).toBe(200)
    })

    // A campaign's batch of 5,000 messages had its tally costed at 5,000,000 rows and JIT-compiled
    // (about 300 ms of planning per statement, twice) for a grouping that runs in 2 ms.
    it("plans the tallies as small: a row's metrics estimated at two rows, the statement tallies never JIT-compiled, the row tallies planned once", async () => {
      for (const table of ["leads", "conversations", "messages", "orders"]) {
        const [plan] = await rows<{ "QUERY PLAN": ReadonlyArray<{ Plan: { "Plan Rows": number } }> }>(
          `EXPLAIN (FORMAT JSON) SELECT * FROM ${table}_metrics(NULL::${table})`
        )
        expect(plan!["QUERY PLAN"][0]!.Plan["Plan Rows"], table).toBe(2)
      }
      const settings = await rows<{ proname: string; proconfig: ReadonlyArray<string> | null }>(
        // This test's schema only: other test files migrate schemas of their own in the same database at once.
        "SELECT proname, proconfig FROM pg_proc WHERE proname LIKE '%\\_tally' AND pronamespace = current_schema()::regnamespace ORDER BY proname"
      )
      expect(settings).toEqual([
        { proname: "conversations_tally", proconfig: ["jit=off"] },
        { proname: "leads_tally", proconfig: null },
        { proname: "messages_tally", proconfig: ["jit=off"] },
        { proname: "orders_tally", proconfig: null }
      ])
      // The per-row tallies upsert from PL/pgSQL (whose plans are kept), not through SQL functions
      // that PostgreSQL 15 plans on every call (0.2-0.3 ms an order, measured).
      const replanned = await rows<{ proname: string }>(
        `SELECT proname FROM pg_proc WHERE proname IN ('leads_tally', 'orders_tally')
           AND (prosrc LIKE '%analytics_add(%' OR prosrc LIKE '%\\_metrics(%')`
      )
      expect(replanned).toEqual([])
    })

    // Deleting a lead deletes its threads (the foreign key's cascade) and its messages through them.
    it("finds a lead's threads by a key that leads with the lead, as deleting the lead does", async () => {
      const plan = await run(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          return yield* sql.withTransaction(
            Effect.gen(function* () {
              // The test's tables are small enough to scan: ask which index answers.
              yield* sql`SET LOCAL enable_seqscan = off`
              const explained = yield* sql.unsafe(
                `EXPLAIN (FORMAT JSON) DELETE FROM conversations
                 WHERE account_id = '00000000-0000-0000-0000-000000000001' AND lead_id = 'ld_1'`
              )
              return JSON.stringify(explained)
            })
          )
        })
      )
      expect(plan).toMatch(/"Index Name":\s*"conversations_by_lead"/)
      expect(plan).toMatch(/"Index Cond":\s*"\(\(account_id = [^"]*\) AND \(lead_id = [^"]*\)\)"/)
    })
  })

onDatabase("on embedded PGlite", "never")
onDatabase("on PostgreSQL (PGlite when TEST_DATABASE_URL is unset)", "when-configured")
