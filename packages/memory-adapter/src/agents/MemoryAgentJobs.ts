import { Effect, Layer, PubSub } from "effect"
import { type AgentJob, AgentJobsRepo } from "@leadline/core/agents/AgentJobsRepo"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row extends AgentJob {
  readonly status: "pending" | "done"
  readonly availableAt: string
  readonly leaseUntil: string | null
  readonly outcome: string | null
  readonly error: string | null
}

/** Agent jobs in memory: one per inbound message, claimed with a lease as SQL's are. */
export const layer = Layer.effect(AgentJobsRepo)(
  Effect.gen(function* () {
    // The responder's wake-ups: published when an enqueue commits, as SQL's NOTIFY is.
    const wake = yield* PubSub.sliding<void>(1)
    const jobs = MemoryTable.make({
      primaryKey: (row: Row) => MemoryTable.key(row.accountId, row.id),
      unique: { message: (row) => MemoryTable.key(row.accountId, row.messageId) }
    })
    const change = (accountId: string, id: string, fields: Partial<Row>) =>
      atomically((tx) => {
        const row = jobs.get(MemoryTable.key(accountId, id))
        if (row !== undefined) jobs.update(tx, { ...row, ...fields })
      })

    return AgentJobsRepo.of({
      wakeups: Effect.map(PubSub.subscribe(wake), (subscription) => Effect.asVoid(PubSub.take(subscription))),
      enqueue: (accountId, queued, now) =>
        atomically((tx) => {
          tx.onCommit(() => Effect.runFork(PubSub.publish(wake, undefined)))
          for (const job of queued) {
            // A message that has a job keeps it (the unique constraint refuses the second).
            jobs.insert(tx, {
              accountId,
              ...job,
              attempts: 0,
              status: "pending",
              availableAt: now,
              leaseUntil: null,
              outcome: null,
              error: null
            })
          }
        }),
      // One fiber's read and write in one synchronous step: no other claim sees the job in between.
      claim: (now, leaseUntil, limit) =>
        atomically((tx) => {
          const due = [...jobs.rows()]
            .filter(
              (row) =>
                row.status === "pending" && row.availableAt <= now && (row.leaseUntil === null || row.leaseUntil <= now)
            )
            .sort((a, b) => (a.availableAt < b.availableAt ? -1 : a.availableAt > b.availableAt ? 1 : 0))
            .slice(0, limit)
          return due.map((row): AgentJob => {
            const claimed = { ...row, leaseUntil, attempts: row.attempts + 1 }
            jobs.update(tx, claimed)
            return {
              accountId: claimed.accountId,
              id: claimed.id,
              conversationId: claimed.conversationId,
              messageId: claimed.messageId,
              agentId: claimed.agentId,
              attempts: claimed.attempts
            }
          })
        }),
      finish: (accountId, id, outcome, error) =>
        change(accountId, id, { status: "done", outcome, error, leaseUntil: null }),
      retry: (accountId, id, retryAt, error) => change(accountId, id, { availableAt: retryAt, leaseUntil: null, error })
    })
  })
)
