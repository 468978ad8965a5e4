import { Context, Effect } from "effect"
import { CurrentPrincipal } from "../auth/Principal.ts"
import * as Ids from "../Ids.ts"
import type { Definition, Envelope, EnvelopeOf } from "./Event.ts"

/**
 * Where events are recorded. Appends happen inside the caller's transaction, so
 * an event exists exactly when the change that caused it committed. A batch is one
 * append: a store writes it in one statement, however many events it holds.
 */
export class Outbox extends Context.Service<
  Outbox,
  {
    readonly append: (events: ReadonlyArray<Envelope>) => Effect.Effect<void>
  }
>()("core/Outbox") {}

/** An event to emit: its definition and data, checked against each other here. */
export interface Pending {
  readonly definition: Definition
  readonly data: unknown
  readonly previous?: Record<string, unknown> | undefined
}

export const pending = <D extends Definition>(
  definition: D,
  data: D["data"]["Type"],
  previous?: Record<string, unknown>
): Pending => ({ definition, data, previous })

/** Emits a batch for the caller's account in one append, in the given order. */
export const emitAll = (
  items: ReadonlyArray<Pending>
): Effect.Effect<ReadonlyArray<Envelope>, never, Outbox | CurrentPrincipal> =>
  Effect.gen(function* () {
    if (items.length === 0) return []
    const principal = yield* CurrentPrincipal
    const outbox = yield* Outbox
    const createdAt = yield* Ids.now
    // Sorted, so a batch's ids (made in one millisecond) keep its order.
    const ids: Array<string> = []
    for (let i = 0; i < items.length; i++) ids.push(yield* Ids.make("evt"))
    ids.sort()
    const events = items.map(
      (item, i): Envelope => ({
        id: ids[i]!,
        type: item.definition.type,
        created_at: createdAt,
        account_id: principal.accountId,
        data: item.data,
        ...(item.previous === undefined ? {} : { previous_attributes: item.previous })
      })
    )
    yield* outbox.append(events)
    return events
  })

/** The one call every feature uses to emit an event for the caller's account; `data` must match the definition. */
export const emit = <D extends Definition>(
  definition: D,
  data: D["data"]["Type"],
  previous?: Record<string, unknown>
): Effect.Effect<EnvelopeOf<D>, never, Outbox | CurrentPrincipal> =>
  Effect.map(emitAll([pending(definition, data, previous)]), (events) => events[0] as EnvelopeOf<D>)
