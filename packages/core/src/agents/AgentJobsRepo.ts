import { Context, type Effect, type Scope } from "effect"

/**
 * An inbound message an enabled agent is to answer (docs/contract-commerce-ai.md §5, live behaviour),
 * written in the webhook's transaction with the message, so that no message that should be
 * answered is forgotten by a crash, and answered by the responder outside it.
 */
export interface AgentJob {
  readonly accountId: string
  readonly id: string
  readonly conversationId: string
  /** The inbound message: one job per message, however often Meta delivers it. */
  readonly messageId: string
  readonly agentId: string
  /** Attempts begun, this one included once claimed. */
  readonly attempts: number
}

export type Outcome = "answered" | "handed_off" | "skipped" | "failed"

export class AgentJobsRepo extends Context.Service<
  AgentJobsRepo,
  {
    /** Adds the jobs; a message that has one already keeps it. */
    readonly enqueue: (
      accountId: string,
      jobs: ReadonlyArray<{
        readonly id: string
        readonly conversationId: string
        readonly messageId: string
        readonly agentId: string
      }>,
      now: string
    ) => Effect.Effect<void>
    /**
     * Up to `limit` jobs due at `now` and not held by another responder, each now held until
     * `leaseUntil` with one more attempt counted (a responder that dies leaves it to another).
     */
    readonly claim: (now: string, leaseUntil: string, limit: number) => Effect.Effect<ReadonlyArray<AgentJob>>
    /** The job is over. */
    readonly finish: (
      accountId: string,
      id: string,
      outcome: Outcome,
      error: string | null,
      now: string
    ) => Effect.Effect<void>
    /** The attempt failed and may be retried from `retryAt`. */
    readonly retry: (accountId: string, id: string, retryAt: string, error: string, now: string) => Effect.Effect<void>
    /**
     * Wake-ups for the responder: each effect from it waits until jobs are enqueued and committed
     * (LISTEN/NOTIFY on PostgreSQL and PGlite, a PubSub in memory). Polling is only the fallback.
     */
    readonly wakeups: Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
  }
>()("core/AgentJobsRepo") {}
