import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * Events, endpoints, deliveries and attempts keyed by account (docs/scaling.md, "Citus"): each
 * table's primary key and every foreign key between them start with `account_id`, so Citus can
 * keep an account's rows of all four on one shard. Attempts had no account: each takes its
 * delivery's. The queries name the account wherever the code knows it; the two that read every
 * account's events by id (the streams' feed, retention) keep an index on `id` alone.
 *
 * Every table is locked while its key is rebuilt: on a large database, run `leadline migrate`
 * in a quiet hour.
 */
export const migration = Migration.make(
  "0044_webhooks_keyed_by_account",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Backfilled while the deliveries' old key (id) still finds each attempt's delivery.
    yield* sql`ALTER TABLE webhook_attempts ADD COLUMN account_id uuid`
    yield* sql`UPDATE webhook_attempts a SET account_id = d.account_id FROM webhook_deliveries d WHERE d.id = a.delivery_id`
    yield* sql`ALTER TABLE webhook_attempts ALTER COLUMN account_id SET NOT NULL`

    // The foreign keys name the keys that change: they go first, and come back with the account in them.
    yield* sql`ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_delivery_id_fkey`
    yield* sql`ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey,
                                              DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey`

    yield* sql`ALTER TABLE events DROP CONSTRAINT events_pkey, ADD PRIMARY KEY (account_id, id)`
    // The account's newest-first page walks the new key backwards.
    yield* sql`DROP INDEX events_account_newest`
    yield* sql`CREATE INDEX events_by_id ON events (id)`
    yield* sql`ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_pkey, ADD PRIMARY KEY (account_id, id)`
    yield* sql`ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_pkey, ADD PRIMARY KEY (account_id, id)`
    yield* sql`ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_pkey,
                                            ADD PRIMARY KEY (account_id, delivery_id, number)`

    yield* sql`ALTER TABLE webhook_deliveries
                 ADD FOREIGN KEY (account_id, event_id) REFERENCES events (account_id, id),
                 ADD FOREIGN KEY (account_id, endpoint_id) REFERENCES webhook_endpoints (account_id, id)`
    yield* sql`ALTER TABLE webhook_attempts
                 ADD FOREIGN KEY (account_id, delivery_id) REFERENCES webhook_deliveries (account_id, id)`

    // An endpoint's deliveries, and its pending ones of one lead (the claim's order), found within the account.
    yield* sql`DROP INDEX webhook_deliveries_endpoint`
    yield* sql`CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (account_id, endpoint_id, status)`
    yield* sql`DROP INDEX webhook_deliveries_pending_by_key`
    yield* sql`CREATE INDEX webhook_deliveries_pending_by_key ON webhook_deliveries (account_id, endpoint_id, ordering_key, id)
               WHERE status = 'pending' AND ordering_key IS NOT NULL`
  })
)
