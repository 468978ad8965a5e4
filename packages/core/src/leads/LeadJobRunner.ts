import { Cause, Clock, Context, Data, Effect, Fiber, Layer } from "effect"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { systemPrincipal } from "../auth/SystemPrincipal.ts"
import { emitAll, Outbox, pending } from "../events/Outbox.ts"
import * as Ids from "../Ids.ts"
import * as Versioned from "../Versioned.ts"
import * as Loop from "../internal/loop.ts"
import { Transactor } from "../Transactor.ts"
import type { Lead } from "./Lead.ts"
import * as LeadBulk from "./LeadBulk.ts"
import * as LeadEvents from "./LeadEvents.ts"
import * as LeadImport from "./LeadImport.ts"
import * as Job from "./LeadJob.ts"
import { CHUNK_ROWS, type LeadJob, type RowError } from "./LeadJob.ts"
import { type ClaimedJob, LeadJobsRepo } from "./LeadJobsRepo.ts"
import * as LeadSearch from "./LeadSearch.ts"
import { LeadsRepo, phoneTakenMessage } from "./LeadsRepo.ts"

export interface Options {
  /** How long a claim holds a job between two chunks (60 s): a runner that dies leaves it to the next after this. */
  readonly leaseMillis?: number | undefined
  /** The leads a bulk change reads and writes per transaction (500). */
  readonly bulkPage?: number | undefined
}

/** `lead.updated` for each lead changed, with the old values of what changed (none for a lead as it was). */
const changeEvents = (after: ReadonlyArray<Lead>, beforeOf: (lead: Lead) => Lead | undefined) =>
  after.flatMap((lead) => {
    const before = beforeOf(lead)
    const previous = before === undefined ? {} : Versioned.previousAttributes(before, lead)
    return before === undefined || Object.keys(previous).length === 0
      ? []
      : [pending(LeadEvents.updated, lead, previous)]
  })

/** Another runner took the job over (this one's lease ran out): the chunk's transaction rolls back. */
class LeaseLost extends Data.TaggedError("LeaseLost")<{ readonly jobId: string }> {}

const iso = (millis: number) => new Date(millis).toISOString()

/**
 * Runs lead jobs (docs/contract.md, "Imports, exports and bulk changes"): claims the oldest waiting job
 * under a lease and works through it a chunk at a time. Each chunk's leads, their `lead.created` events
 * and the job's progress commit in one transaction that also checks the lease, so a chunk is applied
 * once; a runner that dies mid-job leaves it to the next, which starts at the first chunk not committed.
 */
export class LeadJobRunner extends Context.Service<LeadJobRunner, { readonly runOnce: Effect.Effect<number> }>()(
  "core/LeadJobRunner"
) {
  static readonly layer = (
    options: Options = {}
  ): Layer.Layer<LeadJobRunner, never, LeadJobsRepo | LeadsRepo | AccountsRepo | Transactor | Outbox> =>
    Layer.effect(
      LeadJobRunner,
      Effect.gen(function* () {
        const jobs = yield* LeadJobsRepo
        const leads = yield* LeadsRepo
        const accounts = yield* AccountsRepo
        const transactor = yield* Transactor
        const outbox = yield* Outbox
        const worker = yield* Ids.make("ljr")
        const leaseMillis = options.leaseMillis ?? 60_000
        const bulkPage = options.bulkPage ?? 500
        const leaseUntil = Effect.map(Clock.currentTimeMillis, (now) => iso(now + leaseMillis))

        /** The job and where it stopped, written with the chunk's changes if this runner still holds it. */
        const advance = (accountId: string, job: LeadJob, cursor: string | null) =>
          Effect.gen(function* () {
            const held = yield* jobs.advance(accountId, job, cursor, worker, yield* leaseUntil)
            if (!held) return yield* new LeaseLost({ jobId: job.id })
          })

        const finished = (job: LeadJob, now: string): LeadJob => ({
          ...job,
          state: "succeeded",
          updated_at: now,
          finished_at: now
        })

        /**
         * An import's chunk read and checked, outside any transaction: its rows, each checked as a
         * create, its assignees looked up and its new leads' ids made. Undefined past the last chunk.
         */
        const prepare = (
          accountId: string,
          spec: Job.ImportSpec,
          jobId: string,
          seq: number,
          users: Map<string, boolean>
        ) =>
          Effect.gen(function* () {
            const rows = yield* jobs.chunk(accountId, jobId, seq)
            if (rows === undefined) return undefined
            const checked = rows.map((row) => LeadImport.check(row, spec))
            const assignees = new Set<string>()
            for (const one of checked) {
              const id = "input" in one ? one.input.assigned_user_id : undefined
              if (id != null && !users.has(id)) assignees.add(id)
            }
            for (const id of assignees) users.set(id, (yield* accounts.findUser(accountId, id)) !== undefined)
            const ids: Array<string> = []
            for (const one of checked) if ("input" in one) ids.push(yield* Ids.make("ld"))
            return { seq, checked, ids }
          })

        type Prepared = NonNullable<Effect.Success<ReturnType<typeof prepare>>>

        /** A prepared chunk applied in one transaction; the job after it, or undefined when it was the last. */
        const applyChunk = (
          accountId: string,
          spec: Job.ImportSpec,
          job: LeadJob,
          chunk: Prepared,
          users: Map<string, boolean>
        ) =>
          transactor.withTransaction(
            Effect.gen(function* () {
              const { seq, checked, ids } = chunk
              const now = yield* Ids.now
              let next = 0
              const phones = checked.flatMap((one) => ("input" in one ? [one.input.phone] : []))
              const existing = new Map((yield* leads.findByPhones(accountId, phones)).map((lead) => [lead.phone, lead]))
              const plan = LeadImport.plan(
                checked,
                spec,
                existing,
                (id) => users.get(id) === true,
                () => ids[next++]!,
                now
              )
              const errors: Array<RowError> = [...plan.errors]
              const counts = { ...plan.counts }
              if (!job.dry_run) {
                const inserted = new Set(yield* leads.insertMany(accountId, plan.inserts))
                // A phone a single create took since the rows were read: that row is refused, as its create would be.
                const made = plan.inserts.filter((lead) => inserted.has(lead.id))
                for (const lead of plan.inserts) {
                  if (inserted.has(lead.id)) continue
                  const row = plan.madeBy.get(lead.id) ?? null
                  errors.push({ row, lead_id: null, field: "phone", reason: phoneTakenMessage(lead.phone) })
                  counts.created--
                  counts.failed++
                }
                yield* leads.updateMany(accountId, plan.updates)
                // Each lead the rows changed is `lead.updated`, as a PATCH's change is, with what it was.
                const updated = changeEvents(plan.updates, (lead) => existing.get(lead.phone))
                yield* emitAll([...made.map((lead) => pending(LeadEvents.created, lead)), ...updated]).pipe(
                  Effect.provideService(Outbox, outbox),
                  Effect.provideService(CurrentPrincipal, systemPrincipal(accountId, "import"))
                )
              }
              errors.sort((a, b) => (a.row ?? 0) - (b.row ?? 0))
              const last = (seq + 1) * CHUNK_ROWS >= (job.total_rows ?? 0)
              const after = Job.progressed(job, counts, errors, now)
              const written = last ? finished(after, now) : after
              yield* advance(accountId, written, String(seq + 1))
              return last ? undefined : written
            })
          )

        /**
         * An import from the chunk it stopped at: each chunk is read and checked while the one before it
         * is written (the checks are CPU, the writes the database's), then applied in its transaction.
         */
        const runImport = (
          claimed: ClaimedJob,
          spec: Job.ImportSpec,
          from: number,
          progress: (job: LeadJob, seq: number) => void
        ) =>
          Effect.gen(function* () {
            const { accountId } = claimed
            const users = new Map<string, boolean>()
            let job = claimed.job
            let ahead = yield* Effect.forkChild(prepare(accountId, spec, job.id, from, users))
            while (true) {
              const chunk = yield* Fiber.join(ahead)
              if (chunk === undefined) {
                const now = yield* Ids.now
                yield* transactor.withTransaction(advance(accountId, finished(job, now), String(from)))
                return
              }
              ahead = yield* Effect.forkChild(prepare(accountId, spec, job.id, chunk.seq + 1, users))
              const after = yield* applyChunk(accountId, spec, job, chunk, users).pipe(
                Effect.onError(() => Fiber.interrupt(ahead))
              )
              if (after === undefined) return yield* Fiber.interrupt(ahead)
              job = after
              from = chunk.seq + 1
              progress(job, from)
            }
          })

        /** One page of a bulk change: the job after it, and the last lead read (undefined when done). */
        const bulkPageOf = (claimed: ClaimedJob, spec: Job.BulkSpec, job: LeadJob, cursor: string | null) =>
          Effect.gen(function* () {
            const { accountId } = claimed
            return yield* transactor.withTransaction(
              Effect.gen(function* () {
                // A lead deleted since it ended a page cannot anchor the next: start over, which changes
                // nothing twice (a lead already changed is left as it is).
                const anchor = cursor === null ? undefined : yield* leads.find(accountId, cursor)
                const page = yield* leads.search(accountId, {
                  filter: LeadSearch.filterOf(spec.filter),
                  order: { key: "created_at", descending: false },
                  window: anchor === undefined ? { by: "offset", offset: 0 } : { by: "after", anchor },
                  limit: bulkPage
                })
                const now = yield* Ids.now
                const changed: Array<Lead> = []
                const errors: Array<RowError> = []
                let unchanged = 0
                for (const lead of page.items) {
                  const outcome = LeadBulk.apply(lead, spec, now)
                  if (outcome === undefined) unchanged++
                  else if (LeadBulk.isError(outcome)) errors.push(outcome)
                  else changed.push(outcome)
                }
                if (!job.dry_run) {
                  yield* leads.updateMany(accountId, changed)
                  const before = new Map(page.items.map((lead) => [lead.id, lead]))
                  yield* emitAll(changeEvents(changed, (lead) => before.get(lead.id))).pipe(
                    Effect.provideService(Outbox, outbox),
                    Effect.provideService(CurrentPrincipal, systemPrincipal(accountId, "bulk"))
                  )
                }
                const counts = {
                  read: page.items.length,
                  created: 0,
                  updated: changed.length,
                  unchanged,
                  failed: errors.length
                }
                const after = Job.progressed(job, counts, errors, now)
                const last = !page.hasMore
                const written = last ? finished(after, now) : after
                const lastId = page.items.at(-1)?.id ?? cursor
                yield* advance(accountId, written, lastId)
                return last ? undefined : ([written, lastId] as const)
              })
            )
          })

        const failed = (claimed: ClaimedJob, job: LeadJob, cursor: string | null) =>
          Effect.gen(function* () {
            const now = yield* Ids.now
            yield* transactor.withTransaction(
              advance(
                claimed.accountId,
                {
                  ...job,
                  state: "failed",
                  failure: "The job stopped on an internal error; the rows counted before it were applied",
                  updated_at: now,
                  finished_at: now
                },
                cursor
              )
            )
          })

        const run = (claimed: ClaimedJob) =>
          Effect.gen(function* () {
            const spec = claimed.spec
            let job: LeadJob = claimed.job
            let cursor = claimed.cursor
            const attempt = Effect.gen(function* () {
              if (spec.kind === "import") {
                return yield* runImport(claimed, spec, Number(cursor ?? "0"), (after, seq) => {
                  job = after
                  cursor = String(seq)
                })
              }
              while (true) {
                const after = yield* bulkPageOf(claimed, spec, job, cursor)
                if (after === undefined) return
                ;[job, cursor] = after
              }
            })
            yield* attempt.pipe(
              Effect.catchTag("LeaseLost", () => Effect.logInfo(`Lead job ${job.id} was taken over by another runner`)),
              Effect.catchCause((cause) =>
                Cause.hasInterrupts(cause)
                  ? Effect.interrupt
                  : Effect.logWarning(`Lead job ${job.id} failed`, cause).pipe(
                      Effect.andThen(failed(claimed, job, cursor)),
                      Effect.catchCause(() => Effect.void)
                    )
              )
            )
          })

        const runOnce = Effect.gen(function* () {
          let done = 0
          while (true) {
            const now = yield* Clock.currentTimeMillis
            const claimed = yield* jobs.claim(worker, iso(now), iso(now + leaseMillis))
            if (claimed === undefined) return done
            yield* run(claimed)
            done++
          }
        })

        return LeadJobRunner.of({ runOnce })
      })
    )
}

/**
 * Runs the jobs for the life of the layer (in the server, or a `leadline worker`): as soon as a job
 * commits (the jobs' wake-ups), and every `intervalMillis` (1 s) as the fallback.
 */
export const loop = (options: { readonly intervalMillis?: number | undefined } = {}) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const runner = yield* LeadJobRunner
      const jobs = yield* LeadJobsRepo
      yield* Loop.woken("Running lead jobs", options.intervalMillis ?? 1_000, jobs.wakeups, runner.runOnce)
    })
  )
