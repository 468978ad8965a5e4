import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * Imports and bulk changes of leads as jobs (docs/contract.md, "Imports, exports and bulk changes"): the
 * job with its counts and first row errors, the request it runs (`spec`), where it stopped (`cursor`) and
 * the runner holding it (`lease_owner` until `lease_until`); an import's file in chunks of rows, kept
 * until the job ends, so a runner reads one chunk at a time and another can resume after a crash.
 */
export const migration = Migration.make(
  "0039_lead_jobs",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE lead_jobs (
      account_id uuid NOT NULL REFERENCES accounts (id),
      id text NOT NULL,
      kind text NOT NULL,
      state text NOT NULL,
      dry_run boolean NOT NULL,
      total_rows integer,
      counts jsonb NOT NULL,
      errors jsonb NOT NULL,
      errors_truncated boolean NOT NULL,
      failure text,
      spec jsonb NOT NULL,
      cursor text,
      lease_owner text,
      lease_until timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      finished_at timestamptz,
      PRIMARY KEY (account_id, id)
    )`
    // Serves the claim: the jobs not done, oldest first.
    yield* sql`CREATE INDEX lead_jobs_waiting ON lead_jobs (created_at) WHERE state IN ('queued', 'running')`
    yield* sql`CREATE INDEX lead_jobs_newest_first ON lead_jobs (account_id, created_at DESC, id DESC)`
    yield* sql`CREATE TABLE lead_job_chunks (
      account_id uuid NOT NULL,
      job_id text NOT NULL,
      seq integer NOT NULL,
      rows jsonb NOT NULL,
      PRIMARY KEY (account_id, job_id, seq),
      FOREIGN KEY (account_id, job_id) REFERENCES lead_jobs (account_id, id) ON DELETE CASCADE
    )`
  })
)
