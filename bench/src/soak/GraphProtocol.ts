/** What the soak's Graph process (GraphServer.ts) and its parent (Graph.ts) say to each other. */

/**
 * How Graph answered one send. `success`, `slow` (a success after 0.2-1.5 s), `late` (a success
 * after the sender's timeout) and `pageAfterTake` (a 502 page from a gateway after Graph took the
 * message) take it; `throttled` (429, Graph error 130429 or 80007) and `unavailable` (503, Graph
 * error 2) refuse it for now; `pageBeforeTake` (a 500 page) and `hang` (no answer) do not take it,
 * and the sender cannot tell.
 */
export type Answer =
  | "success"
  | "slow"
  | "late"
  | "pageAfterTake"
  | "throttled"
  | "unavailable"
  | "pageBeforeTake"
  | "hang"

/** The share of sends answered each way but `success`, which takes what is left. */
export type Rates = Record<Exclude<Answer, "success">, number>

/** The answers that took the message: Meta would send its statuses. */
export const TAKES: ReadonlySet<Answer> = new Set(["success", "slow", "late", "pageAfterTake"])

/** The answers after which the sender cannot know whether the message went (contract-messaging §6.3). */
export const UNKNOWN: ReadonlySet<Answer> = new Set(["late", "pageAfterTake", "pageBeforeTake", "hang"])

/** One send as Graph saw it. */
export interface Attempt {
  readonly phoneNumberId: string
  /** `biz_opaque_callback_data`: Leadline's message id. */
  readonly callbackData: string
  readonly to: string
  readonly type: string
  readonly at: number
  readonly answer: Answer
  /** The wamid given when Graph took the message. */
  readonly wamid: string | null
}

export type ToGraph =
  | { readonly type: "faults"; readonly rates: Rates; readonly lateMillis: number }
  | { readonly type: "down" }
  | { readonly type: "up" }
  | { readonly type: "flush" }

export type FromGraph =
  | { readonly type: "ready"; readonly port: number }
  | { readonly type: "attempts"; readonly attempts: ReadonlyArray<Attempt> }
  | { readonly type: "down"; readonly cut: number }
  | { readonly type: "up" }
  | { readonly type: "flushed" }
