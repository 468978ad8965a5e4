import { Context, Effect, Layer, Queue, type Scope } from "effect"
import * as PgliteClient from "./PgliteClient.ts"

/** The channel committed deliveries are announced on, for the webhook workers. */
export const DELIVERIES_CHANNEL = "leadline_deliveries"

/** The channel every commit that records events is announced on, for the event streams' fan-out. */
export const EVENTS_CHANNEL = "leadline_events"

/** The channel a queued outbound message is announced on, for the message sender. */
export const MESSAGES_CHANNEL = "leadline_messages"

/** The channel an enqueued agent job is announced on, for the agents' responder. */
export const AGENT_JOBS_CHANNEL = "leadline_agent_jobs"

/** The channel a new lead job (an import, a bulk change) is announced on, for the lead job runners. */
export const LEAD_JOBS_CHANNEL = "leadline_lead_jobs"

/** The channel an inbound file to fetch is announced on, for the media fetchers. */
export const MEDIA_CHANNEL = "leadline_media"

/** The channel a change to an API key (scopes, revocation) is announced on, so every server forgets its cached keys. */
export const API_KEYS_CHANNEL = "leadline_api_keys"

/**
 * Wake-ups between the processes on one database (docs/performance.md, "Wake-ups after the
 * commit"): `listen` waits for the next one on a channel; `announce` sends one, after a commit.
 *
 * A `pg_notify` inside a writing transaction makes every such commit in the database queue on one
 * lock, held through its WAL flush (PostgreSQL serialises notifying commits to keep its queue in
 * commit order), which capped a database at a few thousand creates a second. So the hot paths
 * announce after their commit instead (`UnitOfWork.afterCommit`): the process's own listeners wake
 * at once, and the other processes get one NOTIFY for every announcement made while the previous
 * one was on its way, from a transaction that writes nothing else. A wake-up is only a hint: every
 * listener also polls, so one lost with a crash costs a poll's delay, never a delivery.
 */
export class Notifications extends Context.Service<
  Notifications,
  {
    readonly listen: (channel: string) => Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
    /** Wakes `channel`'s listeners here at once and in the other processes soon; never waits, never fails. */
    readonly announce: (channel: string) => Effect.Effect<void>
  }
>()("sql-adapter/Notifications") {}

/** Queues of this process's listeners, by channel: the announcements made here wake them without a round trip. */
const localListeners = () => {
  const byChannel = new Map<string, Set<Queue.Queue<void>>>()
  return {
    add: (channel: string) =>
      Effect.acquireRelease(
        Effect.map(Queue.sliding<void>(1), (queue) => {
          const set = byChannel.get(channel) ?? new Set()
          byChannel.set(channel, set)
          set.add(queue)
          return queue
        }),
        (queue) => Effect.sync(() => byChannel.get(channel)?.delete(queue))
      ),
    wake: (channel: string) => {
      for (const queue of byChannel.get(channel) ?? []) Queue.offerUnsafe(queue, undefined)
    }
  }
}

/**
 * LISTEN over queues of notifications (a PostgreSQL server's sessions), and NOTIFY through `send`
 * (the channels announced since the last send, one transaction for all of them). `own` tells a
 * notification this process sent: its listeners were woken when it was announced, and a second
 * wake-up would only send each of them looking again for what it has already taken.
 */
export const fromQueues = <N>(
  listen: (channel: string) => Effect.Effect<Queue.Dequeue<N, unknown>, unknown, Scope.Scope>,
  send: (channels: ReadonlyArray<string>) => Effect.Effect<unknown, unknown>,
  own: (notification: N) => boolean
) =>
  Effect.gen(function* () {
    const local = localListeners()
    const pending = new Set<string>()
    const due = yield* Queue.sliding<void>(1)
    // One NOTIFY at a time: what is announced while it is on its way goes with the next.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          yield* Queue.take(due)
          const channels = [...pending]
          pending.clear()
          yield* Effect.ignore(send(channels))
        })
      )
    )
    return Notifications.of({
      listen: (channel) =>
        Effect.gen(function* () {
          const queue = yield* local.add(channel)
          // A lost listener connection ends the other processes' wake-ups; the polling carries on.
          yield* listen(channel).pipe(
            Effect.flatMap((remote) =>
              Effect.forkScoped(
                Effect.forever(
                  Effect.flatMap(Queue.take(remote), (notification) =>
                    own(notification) ? Effect.void : Queue.offer(queue, undefined)
                  )
                )
              )
            ),
            Effect.ignore
          )
          return Queue.take(queue)
        }),
      announce: (channel) =>
        Effect.sync(() => {
          local.wake(channel)
          pending.add(channel)
          Queue.offerUnsafe(due, undefined)
        })
    })
  })

/** PGlite lives in this process alone: an announcement only wakes this process's listeners. */
export const layerPglite = Layer.effect(
  Notifications,
  Effect.gen(function* () {
    const db = yield* PgliteClient.Pglite
    const local = localListeners()
    return Notifications.of({
      listen: (channel) =>
        Effect.gen(function* () {
          const queue = yield* local.add(channel)
          // NOTIFYs still sent inside transactions (the rarer changes) arrive here.
          yield* Effect.acquireRelease(
            Effect.promise(() => db.listen(channel, () => Queue.offerUnsafe(queue, undefined))),
            (unlisten) => Effect.promise(() => unlisten())
          )
          return Queue.take(queue)
        }),
      announce: (channel) => Effect.sync(() => local.wake(channel))
    })
  })
)
