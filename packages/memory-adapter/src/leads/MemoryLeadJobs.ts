import { Effect, Layer, PubSub } from "effect"
import type { ImportRow, LeadJob, Spec } from "@leadline/core/leads/LeadJob"
import { LeadJobsRepo } from "@leadline/core/leads/LeadJobsRepo"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly job: LeadJob
  readonly spec: Spec
  readonly cursor: string | null
  readonly leaseOwner: string | null
  readonly leaseUntil: string | null
  readonly chunks: ReadonlyArray<ReadonlyArray<ImportRow>>
}

const isDone = (job: LeadJob) => job.state === "succeeded" || job.state === "failed"

/** Lead jobs in memory, with their files' chunks; claimed with a lease as SQL's are. */
export const layer = Layer.effect(LeadJobsRepo)(
  Effect.gen(function* () {
    // The runners' wake-ups: published when a job commits, as SQL's NOTIFY is.
    const wake = yield* PubSub.sliding<void>(1)
    const jobs = MemoryTable.make({
      primaryKey: (row: Row) => MemoryTable.key(row.accountId, row.job.id),
      indexes: { account: (row) => row.accountId },
      order: MemoryTable.newestFirst(
        (row: Row) => row.job.created_at,
        (row) => row.job.id
      )
    })

    return LeadJobsRepo.of({
      wakeups: Effect.map(PubSub.subscribe(wake), (subscription) => Effect.asVoid(PubSub.take(subscription))),
      create: (accountId, job, spec, chunks) =>
        atomically((tx) => {
          tx.onCommit(() => Effect.runFork(PubSub.publish(wake, undefined)))
          jobs.insert(tx, { accountId, job, spec, cursor: null, leaseOwner: null, leaseUntil: null, chunks })
        }),
      find: (accountId, id) => Effect.sync(() => jobs.get(MemoryTable.key(accountId, id))?.job),
      list: (accountId, page, kind) =>
        Effect.sync(() => {
          const listed = jobs.page(
            "account",
            accountId,
            page,
            kind === undefined ? undefined : (row) => row.job.kind === kind
          )
          return { items: listed.items.map((row) => row.job), total: listed.total }
        }),
      // One fiber's read and write in one synchronous step: no other claim sees the job in between.
      claim: (worker, now, leaseUntil) =>
        atomically((tx) => {
          const due = [...jobs.rows()]
            .filter((row) => !isDone(row.job) && (row.leaseUntil === null || row.leaseUntil <= now))
            .sort((a, b) => (a.job.created_at < b.job.created_at ? -1 : a.job.created_at > b.job.created_at ? 1 : 0))[0]
          if (due === undefined) return undefined
          const job: LeadJob = { ...due.job, state: "running", updated_at: now }
          jobs.update(tx, { ...due, job, leaseOwner: worker, leaseUntil })
          return { accountId: due.accountId, job, spec: due.spec, cursor: due.cursor }
        }),
      chunk: (accountId, jobId, seq) => Effect.sync(() => jobs.get(MemoryTable.key(accountId, jobId))?.chunks[seq]),
      advance: (accountId, job, cursor, worker, leaseUntil) =>
        atomically((tx) => {
          const row = jobs.get(MemoryTable.key(accountId, job.id))
          if (row === undefined || row.leaseOwner !== worker) return false
          const done = isDone(job)
          jobs.update(tx, {
            ...row,
            job,
            cursor,
            leaseOwner: done ? null : worker,
            leaseUntil: done ? null : leaseUntil,
            chunks: done ? [] : row.chunks
          })
          return true
        })
    })
  })
)
