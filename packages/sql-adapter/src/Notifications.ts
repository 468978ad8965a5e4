import { Context, Effect, Layer, Queue, type Scope } from "effect"
import * as PgliteClient from "./PgliteClient.ts"

/** The channel committed deliveries are announced on (`pg_notify` inside the transaction: sent at commit). */
export const DELIVERIES_CHANNEL = "leadline_deliveries"

/** The channel every commit that records events is announced on, for the event streams' fan-out. */
export const EVENTS_CHANNEL = "leadline_events"

/** The channel a queued outbound message is announced on, for the message sender. */
export const MESSAGES_CHANNEL = "leadline_messages"

/** The channel an enqueued agent job is announced on, for the agents' responder. */
export const AGENT_JOBS_CHANNEL = "leadline_agent_jobs"

/** The channel a new lead job (an import, a bulk change) is announced on, for the lead job runners. */
export const LEAD_JOBS_CHANNEL = "leadline_lead_jobs"

/** The channel a change to an API key (scopes, revocation) is announced on, so every server forgets its cached keys. */
export const API_KEYS_CHANNEL = "leadline_api_keys"

/** LISTEN, the same on both databases: an effect that waits for the next notification. */
export class Notifications extends Context.Service<
  Notifications,
  { readonly listen: (channel: string) => Effect.Effect<Effect.Effect<void>, never, Scope.Scope> }
>()("sql-adapter/Notifications") {}

/** LISTEN over queues of notifications (a PostgreSQL server's sessions). */
export const fromQueues = (
  listen: (channel: string) => Effect.Effect<Queue.Dequeue<unknown, unknown>, unknown, Scope.Scope>
) =>
  Notifications.of({
    listen: (channel) =>
      listen(channel).pipe(
        Effect.map((queue) =>
          // A lost listener connection ends the stream of wake-ups; the worker's polling carries on.
          Effect.asVoid(Effect.catchCause(Queue.take(queue), () => Effect.never))
        ),
        Effect.catchCause(() => Effect.succeed(Effect.never))
      )
  })

export const layerPglite = Layer.effect(
  Notifications,
  Effect.map(PgliteClient.Pglite, (db) =>
    Notifications.of({
      listen: (channel) =>
        Effect.gen(function* () {
          const queue = yield* Queue.sliding<void>(1)
          yield* Effect.acquireRelease(
            Effect.promise(() => db.listen(channel, () => Queue.offerUnsafe(queue, undefined))),
            (unlisten) => Effect.promise(() => unlisten())
          )
          return Queue.take(queue)
        })
    })
  )
)
