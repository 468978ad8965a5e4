import { readFileSync } from "node:fs"
import { Effect, ManagedRuntime } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../src/Database.ts"
import * as CitusReadiness from "./CitusReadiness.ts"
import * as TestDatabases from "./TestDatabases.ts"

/** The statements docs/scaling.md gives for Citus, one per line. */
const documented = () =>
  readFileSync(new URL("../../../docs/scaling.md", import.meta.url), "utf8").match(
    /^SELECT create_(reference|distributed)_table\(.*\);$/gm
  ) ?? []

/** Tables that were keyed by id alone, or had no account_id, before migrations 0044 and 0045. */
const REKEYED = [
  "events",
  "webhook_endpoints",
  "webhook_deliveries",
  "webhook_attempts",
  "media_objects",
  "media_chunks"
]

const PLANTED = [
  // No account_id, and not listed.
  "CREATE TABLE planted_keyless (id text PRIMARY KEY, note text)",
  // Keyed by id alone, with a unique constraint that does hold the account.
  "CREATE TABLE planted_by_id (account_id uuid NOT NULL, id text PRIMARY KEY, code text, UNIQUE (account_id, code))",
  // Keyed right, but a partial unique index and a foreign key without the account.
  `CREATE TABLE planted_child (account_id uuid NOT NULL, id text NOT NULL, parent_id text REFERENCES planted_by_id (id),
     external_ref text, PRIMARY KEY (account_id, id))`,
  "CREATE UNIQUE INDEX planted_child_external ON planted_child (external_ref) WHERE external_ref IS NOT NULL",
  // A text account_id: Citus colocates only distribution columns of one type.
  "CREATE TABLE planted_text_account (account_id text NOT NULL, id text NOT NULL, PRIMARY KEY (account_id, id))",
  // Listed below as a reference table, but pointing at a distributed one.
  "CREATE TABLE planted_lookup (code text PRIMARY KEY, account_id uuid NOT NULL, lead_id text NOT NULL, FOREIGN KEY (account_id, lead_id) REFERENCES leads (account_id, id))"
]

for (const database of TestDatabases.all) {
  describe(`Citus readiness, on ${database.name}`, () => {
    let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
    let dispose = async () => {}
    beforeAll(async () => {
      const opened = await database.open()
      dispose = opened.dispose
      // Building it runs every migration.
      runtime = ManagedRuntime.make(Database.layer(opened.config))
      await runtime.runPromise(Effect.void)
    })
    afterAll(async () => {
      await runtime?.dispose()
      await dispose()
    })
    const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => runtime.runPromise(effect)
    const statement = (text: string) => run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text)))
    const readiness = async (classification?: CitusReadiness.Classification) =>
      CitusReadiness.check(await run(CitusReadiness.readCatalog), classification)

    it("after every migration: each table is distributed by account_id, or listed as one Citus keeps whole", async () => {
      const found = await readiness()
      expect(found.problems).toEqual([])
      expect(found.reference).toEqual(["accounts", "api_keys", "channels", "users"])
      expect(found.local).toEqual(["leadline_migrations"])
      expect(found.distributed).toEqual(expect.arrayContaining(["leads", "messages", "orders", ...REKEYED]))
      const { tables } = await run(CitusReadiness.readCatalog)
      expect(found.distributed.length).toBe(tables.length - 5)
      expect(found.distributed.length).toBeGreaterThan(25)
    })

    it("docs/scaling.md distributes exactly these tables, reference tables first, each after those it points at", async () => {
      const catalog = await run(CitusReadiness.readCatalog)
      const statements = CitusReadiness.statements(catalog, CitusReadiness.check(catalog))
      expect(documented()).toEqual(statements)
      expect(statements[0]).toBe("SELECT create_reference_table('accounts');")
      expect(statements).toContain("SELECT create_distributed_table('leads', 'account_id');")
      const position = (table: string) => statements.findIndex((line) => line.includes(`('${table}'`))
      // Each after what it points at: deliveries after events and endpoints, attempts after deliveries.
      for (const key of catalog.foreignKeys) {
        if (key.table !== key.referenced) expect(position(key.referenced), key.name).toBeLessThan(position(key.table))
      }
    })

    it("reports planted tables without account_id in their keys, naming each table and index or constraint", async () => {
      for (const text of PLANTED) await statement(text)
      try {
        const found = await readiness({
          ...CitusReadiness.UNDISTRIBUTED,
          planted_lookup: { kind: "reference", why: "planted" },
          planted_gone: { kind: "reference", why: "planted, and never made" }
        })
        expect([...found.problems].sort()).toEqual(
          [
            "planted_keyless: no account_id column, and not listed as a reference or local table",
            "planted_by_id: primary key planted_by_id_pkey lacks account_id (CREATE UNIQUE INDEX planted_by_id_pkey ON planted_by_id USING btree (id))",
            "planted_child: unique index planted_child_external lacks account_id (CREATE UNIQUE INDEX planted_child_external ON planted_child USING btree (external_ref) WHERE (external_ref IS NOT NULL))",
            "planted_child: foreign key planted_child_parent_id_fkey to planted_by_id does not pair account_id with account_id (FOREIGN KEY (parent_id) REFERENCES planted_by_id(id))",
            "planted_text_account: account_id is text, not uuid",
            "planted_lookup: foreign key planted_lookup_account_id_lead_id_fkey points from a reference table at the distributed leads (FOREIGN KEY (account_id, lead_id) REFERENCES leads(account_id, id))",
            "planted_gone: listed as a reference table, but there is none"
          ].sort()
        )
        expect(found.reference).toContain("planted_lookup")
        expect(found.distributed).toEqual(expect.arrayContaining(["planted_by_id", "planted_child"]))
      } finally {
        await statement(
          "DROP TABLE planted_lookup, planted_text_account, planted_child, planted_by_id, planted_keyless"
        )
      }
      // The one table without account_id in its key is enough to fail the check the first test makes.
      await statement("CREATE TABLE planted_by_id (account_id uuid NOT NULL, id text PRIMARY KEY)")
      try {
        expect((await readiness()).problems).toEqual([
          "planted_by_id: primary key planted_by_id_pkey lacks account_id (CREATE UNIQUE INDEX planted_by_id_pkey ON planted_by_id USING btree (id))"
        ])
      } finally {
        await statement("DROP TABLE planted_by_id")
      }
      expect((await readiness()).problems).toEqual([])
    })
  })
}
