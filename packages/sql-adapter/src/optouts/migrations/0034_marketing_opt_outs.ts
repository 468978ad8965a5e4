import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * A lead's refusal of marketing (null: none), and each account's opt-out keywords and confirmations;
 * an account without a row has the defaults (docs/contract-messaging.md §8.6).
 */
export const migration = Migration.make(
  "0034_marketing_opt_outs",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE leads ADD COLUMN marketing_opt_out jsonb`
    yield* sql`CREATE TABLE opt_out_settings (
      account_id uuid PRIMARY KEY REFERENCES accounts (id),
      opt_out_keywords jsonb NOT NULL,
      opt_in_keywords jsonb NOT NULL,
      opt_out_reply text,
      opt_in_reply text,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  })
)
