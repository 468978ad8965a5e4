import { Context, Effect } from "effect"
import { CurrentPrincipal } from "../auth/Principal.ts"
import * as Ids from "../Ids.ts"
import type { Data, Envelope, EnvelopeOf, EventType } from "./Event.ts"

/**
 * Where events are recorded. Appends happen inside the caller's transaction, so
 * an event exists exactly when the change that caused it committed.
 */
export class Outbox extends Context.Service<
  Outbox,
  {
    readonly append: (event: Envelope) => Effect.Effect<void>
  }
>()("core/Outbox") {}

/** The one call every feature uses to emit an event for the caller's account; `data` must match the type. */
export const emit = <T extends EventType>(
  type: T,
  data: Data<T>
): Effect.Effect<EnvelopeOf<T>, never, Outbox | CurrentPrincipal> =>
  Effect.gen(function* () {
    const principal = yield* CurrentPrincipal
    const outbox = yield* Outbox
    const event = {
      id: yield* Ids.make("evt"),
      type,
      created_at: yield* Ids.now,
      account_id: principal.accountId,
      data
    } as EnvelopeOf<T>
    yield* outbox.append(event as Envelope)
    return event
  })
