import { Context, type Effect, type Scope } from "effect"
import type { Listed, Page } from "../Pagination.ts"
import type { ImportRow, LeadJob, LeadJobKind, Spec } from "./LeadJob.ts"

/** A job a runner holds under a lease, with where it stopped: the next chunk (imports) or the last lead done (bulk). */
export interface ClaimedJob {
  readonly accountId: string
  readonly job: LeadJob
  readonly spec: Spec
  /** The next chunk to read (imports), or the id of the last lead changed (bulk, null before the first). */
  readonly cursor: string | null
}

/**
 * The account's lead jobs and the files of its imports (stored in chunks of rows, so a runner reads one
 * chunk at a time, and a runner that takes a job over after a crash starts at the chunk after the last
 * committed one). A runner claims a job under a lease; each chunk's leads and the job's progress commit
 * together (`advance`, in the caller's transaction), so a chunk is done once or not at all.
 */
export class LeadJobsRepo extends Context.Service<
  LeadJobsRepo,
  {
    /** The job, its request, and the file's rows in chunks (none for a bulk change); wakes the runners at commit. */
    readonly create: (
      accountId: string,
      job: LeadJob,
      spec: Spec,
      chunks: ReadonlyArray<ReadonlyArray<ImportRow>>
    ) => Effect.Effect<void>
    readonly find: (accountId: string, id: string) => Effect.Effect<LeadJob | undefined>
    /** Newest first. */
    readonly list: (accountId: string, page: Page, kind: LeadJobKind | undefined) => Effect.Effect<Listed<LeadJob>>
    /** The oldest queued or running job whose lease is free, now held by `worker` until `leaseUntil`. */
    readonly claim: (worker: string, now: string, leaseUntil: string) => Effect.Effect<ClaimedJob | undefined>
    /** One chunk of an import's file, by its number (from 0); undefined past the last. */
    readonly chunk: (
      accountId: string,
      jobId: string,
      seq: number
    ) => Effect.Effect<ReadonlyArray<ImportRow> | undefined>
    /**
     * Writes the job as it is now and where it stopped, and renews the lease, if `worker` still holds
     * it (false when another runner took it over: the caller's transaction must roll back). A job that
     * is done gives its lease up and its file's chunks go.
     */
    readonly advance: (
      accountId: string,
      job: LeadJob,
      cursor: string | null,
      worker: string,
      leaseUntil: string
    ) => Effect.Effect<boolean>
    /** Signals new jobs (an effect that waits for the next signal); runners also poll. */
    readonly wakeups: Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
  }
>()("core/LeadJobsRepo") {}
