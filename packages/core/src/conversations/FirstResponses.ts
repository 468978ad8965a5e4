import { Context, type Effect } from "effect"
import type { Bounds } from "../metrics/Calendar.ts"
import type { DurationStats } from "../metrics/Metrics.ts"

/**
 * The store's answer to "how long did conversations wait for their first answer" (analytics):
 * for each conversation whose first inbound message falls in the window, the seconds to the
 * first outbound message created after it (whatever became of that message later);
 * conversations without one are left out. A port of its own: the SQL store keeps the two times
 * on the conversation, the in-memory one reads them from the messages.
 */
export class FirstResponses extends Context.Service<
  FirstResponses,
  { readonly stats: (accountId: string, window: Bounds) => Effect.Effect<DurationStats> }
>()("core/FirstResponses") {}
