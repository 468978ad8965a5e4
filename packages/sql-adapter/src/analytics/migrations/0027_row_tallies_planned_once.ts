import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"
import { apply, metrics } from "./0020_analytics_tallies.ts"

/**
 * The per-row tallies (leads, orders) called two SQL-language functions per metric
 * (`<table>_metrics`, then `analytics_add`), and PostgreSQL 15 plans a SQL function's statements
 * on every call: 0.2-0.3 ms an order (measured), while its products' rows are locked, and the
 * same inside every lead create. The same metrics (the bodies as 0020 released them), read
 * from a PL/pgSQL variable in one grouped upsert whose plan PL/pgSQL keeps.
 */
export const migration = Migration.make(
  "0027_row_tallies_planned_once",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (const [table, mode, , body] of metrics) {
      if (mode !== "row") continue
      const tally = (sign: "" | "-") =>
        apply(`SELECT r.account_id, m.metric, m.at, ${sign}m.amount AS amount FROM (${body}) AS m (metric, at, amount)`)
      yield* sql.unsafe(`CREATE OR REPLACE FUNCTION ${table}_tally() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
          r ${table};
        BEGIN
          IF TG_OP <> 'INSERT' THEN
            r := OLD;
            ${tally("-")};
          END IF;
          IF TG_OP <> 'DELETE' THEN
            r := NEW;
            ${tally("")};
          END IF;
          RETURN NULL;
        END $$`)
    }
  })
)
