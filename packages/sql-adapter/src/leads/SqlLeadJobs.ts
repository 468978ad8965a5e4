import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { ImportRow, LeadJob, LeadJobCounts, RowError, Spec } from "@leadline/core/leads/LeadJob"
import { type ClaimedJob, LeadJobsRepo } from "@leadline/core/leads/LeadJobsRepo"
import { iso, isoOrNull, json, orDie } from "../internal/store.ts"
import { LEAD_JOBS_CHANNEL, Notifications } from "../Notifications.ts"

interface JobRow {
  readonly account_id: string
  readonly id: string
  readonly kind: LeadJob["kind"]
  readonly state: LeadJob["state"]
  readonly dry_run: boolean
  readonly total_rows: number | null
  readonly counts: unknown
  readonly errors: unknown
  readonly errors_truncated: boolean
  readonly failure: string | null
  readonly spec: unknown
  readonly cursor: string | null
  readonly created_at: unknown
  readonly updated_at: unknown
  readonly finished_at: unknown
}

const FIELDS = [
  "id",
  "kind",
  "state",
  "dry_run",
  "total_rows",
  "counts",
  "errors",
  "errors_truncated",
  "failure",
  "spec",
  "cursor",
  "created_at",
  "updated_at",
  "finished_at"
]

/** The columns a `JobRow` is read from, of the table named `alias` when given. */
const jobColumns = (alias = "") => {
  const of = alias === "" ? "" : `${alias}.`
  return [`${of}account_id::text AS account_id`, ...FIELDS.map((field) => `${of}${field}`)].join(", ")
}

// Rebuilt in the wire's field order: jsonb keeps its keys sorted by length.
const countsOf = (value: unknown): LeadJobCounts => {
  const { read, created, updated, unchanged, failed } = json<LeadJobCounts>(value)
  return { read, created, updated, unchanged, failed }
}

const errorsOf = (value: unknown): ReadonlyArray<RowError> =>
  json<ReadonlyArray<RowError>>(value).map(({ row, lead_id, field, reason }) => ({ row, lead_id, field, reason }))

const toJob = (row: JobRow): LeadJob => ({
  id: row.id,
  kind: row.kind,
  state: row.state,
  dry_run: row.dry_run,
  total_rows: row.total_rows === null ? null : Number(row.total_rows),
  counts: countsOf(row.counts),
  errors: errorsOf(row.errors),
  errors_truncated: row.errors_truncated,
  failure: row.failure,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
  finished_at: isoOrNull(row.finished_at)
})

const isDone = (job: LeadJob) => job.state === "succeeded" || job.state === "failed"

/** Lead jobs and their files' chunks in SQL (migration 0039); the claim is `FOR UPDATE SKIP LOCKED` with a lease. */
export const layer = Layer.effect(
  LeadJobsRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const notifications = yield* Notifications
    const columns = sql.unsafe(jobColumns())

    return LeadJobsRepo.of({
      wakeups: notifications.listen(LEAD_JOBS_CHANNEL),
      create: (accountId, job, spec, chunks) =>
        orDie(
          Effect.gen(function* () {
            // The runners are woken at COMMIT (NOTIFY is transactional); their polling is only the fallback.
            yield* sql`INSERT INTO lead_jobs (account_id, id, kind, state, dry_run, total_rows, counts, errors,
                errors_truncated, failure, spec, cursor, created_at, updated_at, finished_at)
              VALUES (${accountId}::uuid, ${job.id}, ${job.kind}, ${job.state}, ${job.dry_run}, ${job.total_rows}::int,
                ${JSON.stringify(job.counts)}::jsonb, ${JSON.stringify(job.errors)}::jsonb, ${job.errors_truncated},
                ${job.failure}, ${JSON.stringify(spec)}::jsonb, NULL, ${job.created_at}::timestamptz,
                ${job.updated_at}::timestamptz, NULL)`
            if (chunks.length > 0) {
              yield* sql`INSERT INTO lead_job_chunks (account_id, job_id, seq, rows)
                SELECT ${accountId}::uuid, ${job.id}, (c.ord - 1)::int, c.value
                FROM jsonb_array_elements(${JSON.stringify(chunks)}::jsonb) WITH ORDINALITY AS c(value, ord)`
            }
            yield* sql`SELECT pg_notify(${LEAD_JOBS_CHANNEL}, '')`
          })
        ),
      find: (accountId, id) =>
        orDie(sql<JobRow>`SELECT ${columns} FROM lead_jobs WHERE account_id = ${accountId}::uuid AND id = ${id}`).pipe(
          Effect.map(([row]) => (row === undefined ? undefined : toJob(row)))
        ),
      list: (accountId, page, kind) => {
        const where = sql.and([
          sql`account_id = ${accountId}::uuid`,
          ...(kind === undefined ? [] : [sql`kind = ${kind}`])
        ])
        return orDie(
          Effect.all(
            [
              sql<JobRow>`SELECT ${columns} FROM lead_jobs WHERE ${where}
                ORDER BY created_at DESC, id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`,
              sql<{ total: number }>`SELECT count(*)::int AS total FROM lead_jobs WHERE ${where}`
            ],
            { concurrency: "unbounded" }
          )
        ).pipe(Effect.map(([rows, [count]]) => ({ items: rows.map(toJob), total: count?.total ?? 0 })))
      },
      claim: (worker, now, leaseUntil) =>
        orDie(sql<JobRow>`
          WITH due AS (
            SELECT account_id, id FROM lead_jobs
            WHERE state IN ('queued', 'running') AND (lease_until IS NULL OR lease_until <= ${now}::timestamptz)
            ORDER BY created_at
            LIMIT 1
            FOR UPDATE SKIP LOCKED
          )
          UPDATE lead_jobs AS j SET lease_owner = ${worker}, lease_until = ${leaseUntil}::timestamptz,
            state = 'running', updated_at = ${now}::timestamptz
          FROM due WHERE j.account_id = due.account_id AND j.id = due.id
          RETURNING ${sql.unsafe(jobColumns("j"))}`).pipe(
          Effect.map(([row]): ClaimedJob | undefined =>
            row === undefined
              ? undefined
              : { accountId: row.account_id, job: toJob(row), spec: json<Spec>(row.spec), cursor: row.cursor }
          )
        ),
      chunk: (accountId, jobId, seq) =>
        orDie(
          sql<{ rows: unknown }>`SELECT rows FROM lead_job_chunks
            WHERE account_id = ${accountId}::uuid AND job_id = ${jobId} AND seq = ${seq}::int`
        ).pipe(Effect.map(([row]) => (row === undefined ? undefined : json<ReadonlyArray<ImportRow>>(row.rows)))),
      advance: (accountId, job, cursor, worker, leaseUntil) =>
        orDie(
          Effect.gen(function* () {
            const done = isDone(job)
            const rows = yield* sql<{ id: string }>`UPDATE lead_jobs SET state = ${job.state},
                counts = ${JSON.stringify(job.counts)}::jsonb, errors = ${JSON.stringify(job.errors)}::jsonb,
                errors_truncated = ${job.errors_truncated}, failure = ${job.failure}, cursor = ${cursor},
                lease_owner = ${done ? null : worker}, lease_until = ${done ? null : leaseUntil}::timestamptz,
                updated_at = ${job.updated_at}::timestamptz, finished_at = ${job.finished_at}::timestamptz
              WHERE account_id = ${accountId}::uuid AND id = ${job.id} AND lease_owner = ${worker}
              RETURNING id`
            if (rows.length === 0) return false
            if (done) {
              yield* sql`DELETE FROM lead_job_chunks WHERE account_id = ${accountId}::uuid AND job_id = ${job.id}`
            }
            return true
          })
        )
    })
  })
)
