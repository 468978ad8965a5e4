import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * AI agents (docs/contract-commerce-ai.md §5). The configuration is one jsonb document beside the columns
 * the store looks up by; the name is unique in its account (the service checks first, under
 * `lockAccount`, so this is a last guard).
 */
export const migration = Migration.make(
  "0013_agents",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE agents (
      account_id uuid NOT NULL REFERENCES accounts (id),
      id text NOT NULL,
      name text NOT NULL,
      enabled boolean NOT NULL,
      channels text[] NOT NULL,
      config jsonb NOT NULL,
      version integer NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, id),
      UNIQUE (account_id, name)
    )`
    yield* sql`CREATE INDEX agents_newest_first ON agents (account_id, created_at DESC, id DESC)`
  })
)
