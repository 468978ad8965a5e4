import { Context, Effect } from "effect"
import { CurrentPrincipal } from "../auth/Principal.ts"
import * as Ids from "../Ids.ts"
import type { Definition, Envelope, EnvelopeOf } from "./Event.ts"

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

/** The one call every feature uses to emit an event for the caller's account; `data` must match the definition. */
export const emit = <D extends Definition>(
  definition: D,
  data: D["data"]["Type"]
): Effect.Effect<EnvelopeOf<D>, never, Outbox | CurrentPrincipal> =>
  Effect.gen(function* () {
    const principal = yield* CurrentPrincipal
    const outbox = yield* Outbox
    const event: Envelope = {
      id: yield* Ids.make("evt"),
      type: definition.type,
      created_at: yield* Ids.now,
      account_id: principal.accountId,
      data
    }
    yield* outbox.append(event)
    return event as EnvelopeOf<D>
  })
