import { Effect, ManagedRuntime, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { keyOf, MediaStore } from "@leadline/core/messages/MediaStore"
import { DeliveryQueue } from "@leadline/core/webhooks/DeliveryQueue"
import * as Database from "../src/Database.ts"
import * as Migration from "../src/Migration.ts"
import * as Migrations from "../src/Migrations.ts"
import * as SqlMediaStore from "../src/messages/SqlMediaStore.ts"
import type { Notifications } from "../src/Notifications.ts"
import * as Slices from "../src/Slices.ts"
import * as SqlDeliveryQueue from "../src/webhooks/SqlDeliveryQueue.ts"
import * as TestDatabases from "./TestDatabases.ts"

/** The schema as it was before the tables were keyed by account: every migration up to 0043. */
const BEFORE = 43
const upTo = (last: number) =>
  Migrations.runFor(
    Slices.all.map((slice) => ({
      ...slice,
      migrations: slice.migrations.filter((migration) => Migration.parse(migration.key)!.id <= last)
    })),
    Migrations.historical.filter((migration) => Migration.parse(migration.key)!.id <= last)
  )

const A = "0a5c0a11-0000-4000-8000-00000000000a"
const B = "0b5c0b22-0000-4000-8000-00000000000b"
const NOW = "2026-03-01T12:00:00.000Z"

/** Rows as the version before 0044 wrote them: two accounts' events, deliveries and attempts, and kept files. */
const ROWS = [
  `INSERT INTO accounts (id, name, owner_user_id, plan_id, subscription_status, created_at) VALUES
     ('${A}', 'A', gen_random_uuid(), 'free', 'active', '${NOW}'), ('${B}', 'B', gen_random_uuid(), 'free', 'active', '${NOW}')`,
  `INSERT INTO events (id, account_id, type, created_at, payload, body) VALUES
     ('evt_a1', '${A}', 'lead.created', '${NOW}', '{"id": "evt_a1"}', '{"id":"evt_a1"}'),
     ('evt_b1', '${B}', 'lead.created', '${NOW}', '{"id": "evt_b1"}', '{"id":"evt_b1"}')`,
  `INSERT INTO webhook_endpoints (id, account_id, url, events, secret, enabled, created_at) VALUES
     ('00000000-0000-4000-8000-0000000000a1', '${A}', 'https://a.example.com/hook', '["lead.created"]', 'whsec_a', true, '${NOW}'),
     ('00000000-0000-4000-8000-0000000000b1', '${B}', 'https://b.example.com/hook', '["lead.created"]', 'whsec_b', true, '${NOW}')`,
  `INSERT INTO webhook_deliveries (id, account_id, event_id, event_type, endpoint_id, status, round_attempts,
                                   next_attempt_at, created_at, updated_at) VALUES
     ('dlv_a1', '${A}', 'evt_a1', 'lead.created', '00000000-0000-4000-8000-0000000000a1', 'pending', 2, '${NOW}', '${NOW}', '${NOW}'),
     ('dlv_b1', '${B}', 'evt_b1', 'lead.created', '00000000-0000-4000-8000-0000000000b1', 'failed', 1, NULL, '${NOW}', '${NOW}')`,
  `INSERT INTO webhook_attempts (delivery_id, number, attempted_at, status_code, duration_ms, error) VALUES
     ('dlv_a1', 1, '${NOW}', 500, 12, NULL), ('dlv_a1', 2, '${NOW}', NULL, 10000, 'timeout'),
     ('dlv_b1', 1, '${NOW}', 410, 8, NULL)`,
  `INSERT INTO media_objects (key, upload, content_type, size) VALUES
     ('${A}/msg_1', 'up_a', 'text/plain', 11), ('${B}/med_2', 'up_b', 'image/png', 3), ('acc/legacy', 'up_legacy', 'text/plain', 1)`,
  // Two chunks of A's file, one of B's, one of the key without an account, and one no object names.
  `INSERT INTO media_chunks (upload, seq, bytes) VALUES
     ('up_a', 0, convert_to('hello ', 'UTF8')), ('up_a', 1, convert_to('world', 'UTF8')), ('up_b', 0, '\\x010203'),
     ('up_legacy', 0, convert_to('x', 'UTF8')), ('up_orphan', 0, convert_to('left behind', 'UTF8'))`
]

for (const database of TestDatabases.all) {
  describe(`migrations 0044 and 0045 on a database holding rows, on ${database.name}`, () => {
    let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient | Notifications, unknown>
    let dispose = async () => {}
    let applied: ReadonlyArray<readonly [number, string]> = []
    beforeAll(async () => {
      const opened = await database.open()
      dispose = opened.dispose
      runtime = ManagedRuntime.make(Database.client(opened.config))
      applied = await runtime.runPromise(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* upTo(BEFORE)
          for (const statement of ROWS) yield* sql.unsafe(statement)
          return yield* Migrations.run
        })
      )
    })
    afterAll(async () => {
      await runtime?.dispose()
      await dispose()
    })
    const rows = <A extends object>(statement: string) =>
      runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(statement)))

    it("apply after the rows were written", () => {
      // The migrations after them apply too; these two are what this file is about.
      expect(applied.filter(([number]) => number <= 45)).toEqual([
        [44, "webhooks_keyed_by_account"],
        [45, "media_keyed_by_account"]
      ])
    })

    it("give each attempt its delivery's account, and key the webhook tables by account", async () => {
      expect(
        await rows(`SELECT account_id::text, delivery_id, number FROM webhook_attempts ORDER BY delivery_id, number`)
      ).toEqual([
        { account_id: A, delivery_id: "dlv_a1", number: 1 },
        { account_id: A, delivery_id: "dlv_a1", number: 2 },
        { account_id: B, delivery_id: "dlv_b1", number: 1 }
      ])
      const keys = await rows<{ table: string; definition: string }>(
        `SELECT conrelid::regclass::text AS table, pg_get_constraintdef(oid) AS definition FROM pg_constraint
         WHERE contype = 'p' AND conrelid::regclass::text IN ('events', 'webhook_endpoints', 'webhook_deliveries', 'webhook_attempts')
         ORDER BY 1`
      )
      expect(keys).toEqual([
        { table: "events", definition: "PRIMARY KEY (account_id, id)" },
        { table: "webhook_attempts", definition: "PRIMARY KEY (account_id, delivery_id, number)" },
        { table: "webhook_deliveries", definition: "PRIMARY KEY (account_id, id)" },
        { table: "webhook_endpoints", definition: "PRIMARY KEY (account_id, id)" }
      ])
    })

    it("split each kept file's key into its account and id, and drop what no key of an account could reach", async () => {
      expect(await rows(`SELECT account_id::text, id, upload FROM media_objects ORDER BY account_id, id`)).toEqual([
        { account_id: A, id: "msg_1", upload: "up_a" },
        { account_id: B, id: "med_2", upload: "up_b" }
      ])
      expect(
        await rows(`SELECT account_id::text, upload, seq FROM media_chunks ORDER BY account_id, upload, seq`)
      ).toEqual([
        { account_id: A, upload: "up_a", seq: 0 },
        { account_id: A, upload: "up_a", seq: 1 },
        { account_id: B, upload: "up_b", seq: 0 }
      ])
    })

    it("leave the files readable through the media store, by account and id", async () => {
      const read = await runtime.runPromise(
        Effect.gen(function* () {
          const store = yield* MediaStore
          const kept = yield* store.get(keyOf(A, "msg_1"))
          const bytes = kept === undefined ? [] : yield* Stream.runCollect(kept.bytes)
          return {
            contentType: kept?.contentType,
            text: new TextDecoder().decode(Buffer.concat(bytes.map((chunk) => Buffer.from(chunk)))),
            otherAccount: yield* store.get(keyOf(B, "msg_1"))
          }
        }).pipe(Effect.provide(SqlMediaStore.layer))
      )
      expect(read).toEqual({ contentType: "text/plain", text: "hello world", otherAccount: undefined })
    })

    it("leave the pending delivery to the worker, which records its third attempt under its account", async () => {
      const claimed = await runtime.runPromise(
        Effect.gen(function* () {
          const queue = yield* DeliveryQueue
          const claimed = yield* queue.claim("worker-1", Date.parse(NOW) + 1000, 30_000, 10)
          for (const delivery of claimed) {
            yield* queue.record("worker-1", {
              accountId: delivery.accountId,
              deliveryId: delivery.id,
              attempt: delivery.attempt,
              attemptedAt: Date.parse(NOW) + 2000,
              statusCode: 200,
              durationMs: 5,
              error: null,
              next: { _tag: "Delivered" }
            })
          }
          return claimed.map((delivery) => [delivery.accountId, delivery.id, delivery.attempt, delivery.body])
        }).pipe(Effect.provide(SqlDeliveryQueue.layer))
      )
      expect(claimed).toEqual([[A, "dlv_a1", 3, '{"id":"evt_a1"}']])
      expect(
        await rows(`SELECT d.status, a.account_id::text, a.number, a.status_code FROM webhook_deliveries d
                    JOIN webhook_attempts a ON a.account_id = d.account_id AND a.delivery_id = d.id
                    WHERE d.id = 'dlv_a1' AND a.number = 3`)
      ).toEqual([{ status: "delivered", account_id: A, number: 3, status_code: 200 }])
    })
  })
}
