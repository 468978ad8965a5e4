import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * An import's chunk of 1,000 leads ran the per-row analytics trigger 1,000 times, two thirds of
 * its insert's time (bench/LEADS.md). A statement that tallies its own rows (`SqlLeads.insertMany`,
 * one grouped write) says so for the statement with `leadline.leads_tallied`, and the row trigger
 * stands aside; every other write of a lead is counted by it as before.
 */
export const TALLIED_SETTING = "leadline.leads_tallied"

export const migration = Migration.make(
  "0042_lead_tallies_per_statement",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DROP TRIGGER leads_tally ON leads`
    yield* sql.unsafe(`CREATE TRIGGER leads_tally AFTER INSERT OR DELETE ON leads FOR EACH ROW
      WHEN (current_setting('${TALLIED_SETTING}', true) IS DISTINCT FROM 'on') EXECUTE FUNCTION leads_tally()`)
  })
)
