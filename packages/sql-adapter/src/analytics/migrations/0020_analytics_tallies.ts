import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * What analytics counts, kept as rows are written instead of counted at read time (bench/ANALYTICS.md:
 * counting 1M rows live took 200-300 ms a series and seconds for a summary).
 *
 * `analytics_tallies` holds, per account, metric and 15-minute UTC slot, the running sum of what
 * the account's rows contribute: every zone's offset today is a multiple of 15 minutes, so any
 * zone's days and hours are whole slots. Rows are striped by backend (docs/performance.md's rule for
 * per-account counters): one account's concurrent writes land on different rows. Triggers keep
 * it: per row where rows are written one at a time, per statement (one grouped write, in slot
 * order) where a statement writes thousands. A table's metrics of a row are one SQL function
 * (`<table>_metrics`): an update that changes what it counts takes the old row's out and puts the
 * new row's in, a delete takes it out.
 *
 * A conversation also keeps when it was first written to and first answered, for the first
 * response time.
 */

/**
 * The metrics a row of each table counts: (metric, the instant it counts at, amount); how its
 * triggers run (`row` for tables written a row at a time, where a statement trigger's transition
 * tables cost a lead create a fifth of its throughput; `statement` where one statement writes
 * thousands: a campaign's messages and conversations); and the change of a row that moves them.
 */
export const metrics: ReadonlyArray<
  readonly [table: string, mode: "row" | "statement", changed: string, body: string]
> = [
  [
    "leads",
    "row",
    "OLD.status IS DISTINCT FROM NEW.status",
    // One tally a lead (by its status now): the leads created are the sum over the statuses.
    `SELECT 'leads_status:' || r.status, r.created_at, 1::bigint`
  ],
  ["conversations", "statement", "", `SELECT 'conversations_started', r.created_at, 1::bigint`],
  [
    "messages",
    "statement",
    // Only failing or being cancelled (or coming back) moves a message's counts, not sent → read.
    "(OLD.status IN ('failed', 'cancelled')) IS DISTINCT FROM (NEW.status IN ('failed', 'cancelled'))",
    `SELECT 'messages_inbound', r.created_at, 1::bigint WHERE r.direction = 'inbound'
     UNION ALL SELECT 'messages_outbound', r.created_at, 1::bigint
       WHERE r.direction = 'outbound' AND r.status NOT IN ('failed', 'cancelled')
     UNION ALL SELECT 'messages_outbound_by_agent', r.created_at, 1::bigint
       WHERE r.direction = 'outbound' AND r.status NOT IN ('failed', 'cancelled') AND r.sender_type = 'agent'`
  ],
  [
    "orders",
    "row",
    "OLD.cancelled_at IS DISTINCT FROM NEW.cancelled_at OR OLD.paid_at IS DISTINCT FROM NEW.paid_at OR OLD.payment_status IS DISTINCT FROM NEW.payment_status",
    `SELECT 'orders_created', r.created_at, 1::bigint
     UNION ALL SELECT 'orders_cancelled', r.cancelled_at, 1::bigint WHERE r.cancelled_at IS NOT NULL
     UNION ALL SELECT 'revenue:' || r.currency, r.paid_at, r.amount_total
       WHERE r.payment_status = 'paid' AND r.paid_at IS NOT NULL
     UNION ALL SELECT 'paid_orders:' || r.currency, r.paid_at, 1::bigint
       WHERE r.payment_status = 'paid' AND r.paid_at IS NOT NULL`
  ]
]

const slot = (at: string) => `date_bin('15 minutes', ${at}, timestamptz '1970-01-01 00:00:00+00')`

/** Adds the grouped changes of `rows` (a query of account_id, metric, at, amount) to the tallies. */
export const apply = (rows: string) => `
  INSERT INTO analytics_tallies (account_id, metric, slot, stripe, value)
  SELECT d.account_id, d.metric, ${slot("d.at")}, (pg_backend_pid() % 64)::smallint, sum(d.amount)
  FROM (${rows}) AS d
  GROUP BY 1, 2, 3
  HAVING sum(d.amount) <> 0
  ORDER BY 1, 2, 3
  ON CONFLICT (account_id, metric, slot, stripe) DO UPDATE SET value = analytics_tallies.value + excluded.value`

const counted = (table: string, transition: string, sign: "" | "-") =>
  `SELECT t.account_id, m.metric, m.at, ${sign}m.amount AS amount FROM ${transition} AS t CROSS JOIN LATERAL ${table}_metrics(t) AS m`

export const migration = Migration.make(
  "0020_analytics_tallies",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE analytics_tallies (
      account_id uuid NOT NULL,
      metric text COLLATE "C" NOT NULL,
      slot timestamptz NOT NULL,
      stripe smallint NOT NULL,
      value bigint NOT NULL,
      PRIMARY KEY (account_id, metric, slot, stripe)
    )`
    yield* sql.unsafe(`CREATE FUNCTION analytics_add(account uuid, metric text, at timestamptz, amount bigint)
      RETURNS void LANGUAGE sql AS $$
        INSERT INTO analytics_tallies (account_id, metric, slot, stripe, value)
        VALUES (account, metric, ${slot("at")}, (pg_backend_pid() % 64)::smallint, amount)
        ON CONFLICT (account_id, metric, slot, stripe) DO UPDATE SET value = analytics_tallies.value + excluded.value
      $$`)
    for (const [table, mode, changed, body] of metrics) {
      // Volatile (the default) so that it is not inlined: PostgreSQL 15 fails to plan the inlined
      // UNION ALL under the grouping below ("variable not found in subplan target list").
      yield* sql.unsafe(`CREATE FUNCTION ${table}_metrics(r ${table})
        RETURNS TABLE (metric text, at timestamptz, amount bigint) LANGUAGE sql AS $$ ${body} $$`)
      if (mode === "row") {
        yield* sql.unsafe(`CREATE FUNCTION ${table}_tally() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF TG_OP <> 'INSERT' THEN
              PERFORM analytics_add(OLD.account_id, m.metric, m.at, -m.amount) FROM ${table}_metrics(OLD) AS m;
            END IF;
            IF TG_OP <> 'DELETE' THEN
              PERFORM analytics_add(NEW.account_id, m.metric, m.at, m.amount) FROM ${table}_metrics(NEW) AS m;
            END IF;
            RETURN NULL;
          END $$`)
        yield* sql.unsafe(`CREATE TRIGGER ${table}_tally AFTER INSERT OR DELETE ON ${table}
          FOR EACH ROW EXECUTE FUNCTION ${table}_tally()`)
        yield* sql.unsafe(`CREATE TRIGGER ${table}_tally_update AFTER UPDATE ON ${table}
          FOR EACH ROW WHEN (${changed}) EXECUTE FUNCTION ${table}_tally()`)
      } else {
        yield* sql.unsafe(`CREATE FUNCTION ${table}_tally() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF TG_OP = 'INSERT' THEN
              ${apply(counted(table, "new_rows", ""))};
            ELSIF TG_OP = 'DELETE' THEN
              ${apply(counted(table, "old_rows", "-"))};
            ELSE
              ${apply(`${counted(table, "new_rows", "")} UNION ALL ${counted(table, "old_rows", "-")}`)};
            END IF;
            RETURN NULL;
          END $$`)
        yield* sql.unsafe(`CREATE TRIGGER ${table}_tally_insert AFTER INSERT ON ${table}
          REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${table}_tally()`)
        yield* sql.unsafe(`CREATE TRIGGER ${table}_tally_delete AFTER DELETE ON ${table}
          REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${table}_tally()`)
        // A statement trigger cannot look at columns; a status change is rows of their own.
        if (changed !== "") {
          yield* sql.unsafe(`CREATE FUNCTION ${table}_tally_change() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              PERFORM analytics_add(OLD.account_id, m.metric, m.at, -m.amount) FROM ${table}_metrics(OLD) AS m;
              PERFORM analytics_add(NEW.account_id, m.metric, m.at, m.amount) FROM ${table}_metrics(NEW) AS m;
              RETURN NULL;
            END $$`)
          yield* sql.unsafe(`CREATE TRIGGER ${table}_tally_update AFTER UPDATE ON ${table}
            FOR EACH ROW WHEN (${changed}) EXECUTE FUNCTION ${table}_tally_change()`)
        }
      }
      // What the rows written before this migration count.
      yield* sql.unsafe(apply(counted(table, table, "")))
    }

    yield* sql`ALTER TABLE conversations ADD COLUMN first_inbound_at timestamptz, ADD COLUMN first_response_at timestamptz`
    // The first-response statistics read both times from the index alone.
    yield* sql`CREATE INDEX conversations_first_inbound ON conversations (account_id, first_inbound_at)
               INCLUDE (first_response_at) WHERE first_inbound_at IS NOT NULL`
    // Messages are never moved between conversations and are made in time order, so the first of
    // each kind is the first one stored.
    yield* sql.unsafe(`CREATE FUNCTION messages_firsts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE conversations c SET first_inbound_at = f.at
        FROM (SELECT account_id, conversation_id, min(created_at) AS at FROM new_rows
              WHERE direction = 'inbound' GROUP BY 1, 2 ORDER BY 1, 2) AS f
        WHERE c.account_id = f.account_id AND c.id = f.conversation_id AND c.first_inbound_at IS NULL;
        UPDATE conversations c SET first_response_at = f.at
        FROM (SELECT n.account_id, n.conversation_id, min(n.created_at) AS at
              FROM new_rows n JOIN conversations w ON w.account_id = n.account_id AND w.id = n.conversation_id
              WHERE n.direction = 'outbound' AND w.first_inbound_at IS NOT NULL AND w.first_response_at IS NULL
                AND n.created_at > w.first_inbound_at
              GROUP BY 1, 2 ORDER BY 1, 2) AS f
        WHERE c.account_id = f.account_id AND c.id = f.conversation_id AND c.first_response_at IS NULL;
        RETURN NULL;
      END $$`)
    yield* sql`CREATE TRIGGER messages_firsts AFTER INSERT ON messages
               REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION messages_firsts()`
    yield* sql`UPDATE conversations c SET first_inbound_at = f.first_in, first_response_at = f.answered
      FROM (SELECT i.account_id, i.conversation_id, i.first_in,
              (SELECT min(o.created_at) FROM messages o
               WHERE o.account_id = i.account_id AND o.conversation_id = i.conversation_id
                 AND o.direction = 'outbound' AND o.created_at > i.first_in) AS answered
            FROM (SELECT account_id, conversation_id, min(created_at) AS first_in FROM messages
                  WHERE direction = 'inbound' GROUP BY 1, 2) AS i) AS f
      WHERE c.account_id = f.account_id AND c.id = f.conversation_id`
  })
)
