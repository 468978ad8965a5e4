import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { type AgentJob, AgentJobsRepo } from "@leadline/core/agents/AgentJobsRepo"
import { orDie } from "../internal/store.ts"
import { AGENT_JOBS_CHANNEL, Notifications } from "../Notifications.ts"
import { afterCommitIfWrote } from "../UnitOfWork.ts"

export const layer = Layer.effect(
  AgentJobsRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const notifications = yield* Notifications
    const jobsQueued = notifications.announce(AGENT_JOBS_CHANNEL)
    return AgentJobsRepo.of({
      wakeups: notifications.listen(AGENT_JOBS_CHANNEL),
      enqueue: (accountId, jobs, now) =>
        // The responder is woken once the unit commits (Notifications.ts); its polling is only the fallback.
        orDie(sql`
          WITH inserted AS (
          INSERT INTO agent_jobs (account_id, id, conversation_id, message_id, agent_id, status, attempts, available_at,
                                  created_at, updated_at)
          SELECT ${accountId}::uuid, j.id, j.conversation_id, j.message_id, j.agent_id, 'pending', 0,
                 ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
          FROM jsonb_to_recordset(${JSON.stringify(
            jobs.map((job) => ({
              id: job.id,
              conversation_id: job.conversationId,
              message_id: job.messageId,
              agent_id: job.agentId
            }))
          )}::jsonb) AS j(id text, conversation_id text, message_id text, agent_id text)
          ON CONFLICT (account_id, message_id) DO NOTHING
          RETURNING 1)
          SELECT EXISTS (SELECT 1 FROM inserted) AS wrote`).pipe(Effect.flatMap(afterCommitIfWrote(jobsQueued))),
      claim: (now, leaseUntil, limit) =>
        orDie(sql<{
          account_id: string
          id: string
          conversation_id: string
          message_id: string
          agent_id: string
          attempts: number
        }>`
          WITH due AS (
            SELECT account_id, id FROM agent_jobs
            WHERE status = 'pending' AND available_at <= ${now}::timestamptz
              AND (lease_until IS NULL OR lease_until <= ${now}::timestamptz)
            ORDER BY available_at
            LIMIT ${limit}::int
            FOR UPDATE SKIP LOCKED
          )
          UPDATE agent_jobs AS j SET lease_until = ${leaseUntil}::timestamptz, attempts = j.attempts + 1,
                 updated_at = ${now}::timestamptz
          FROM due WHERE j.account_id = due.account_id AND j.id = due.id
          RETURNING j.account_id::text AS account_id, j.id, j.conversation_id, j.message_id, j.agent_id, j.attempts`).pipe(
          Effect.map((rows) =>
            rows.map(
              (row): AgentJob => ({
                accountId: row.account_id,
                id: row.id,
                conversationId: row.conversation_id,
                messageId: row.message_id,
                agentId: row.agent_id,
                attempts: Number(row.attempts)
              })
            )
          )
        ),
      finish: (accountId, id, outcome, error, now) =>
        orDie(sql`
          UPDATE agent_jobs SET status = 'done', outcome = ${outcome}, error = ${error}, lease_until = NULL,
                 updated_at = ${now}::timestamptz
          WHERE account_id = ${accountId}::uuid AND id = ${id}`).pipe(Effect.asVoid),
      retry: (accountId, id, retryAt, error, now) =>
        orDie(sql`
          UPDATE agent_jobs SET available_at = ${retryAt}::timestamptz, lease_until = NULL, error = ${error},
                 updated_at = ${now}::timestamptz
          WHERE account_id = ${accountId}::uuid AND id = ${id}`).pipe(Effect.asVoid)
    })
  })
)
