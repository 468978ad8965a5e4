import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/** Each account's WhatsApp notices of an order's status; an account without a row has them off. */
export const migration = Migration.make(
  "0029_order_notice_settings",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE order_notice_settings (
      account_id uuid PRIMARY KEY REFERENCES accounts (id),
      enabled boolean NOT NULL,
      template_name text,
      template_language text,
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((template_name IS NULL) = (template_language IS NULL))
    )`
  })
)
