/**
 * The outbound status merge (contract §5.3). Meta's status webhooks arrive late,
 * twice and out of order (`read` without `delivered`, `sent` after `read`, a
 * `failed` after `delivered`), so every write is a merge that only moves forward:
 * Chatwoot's downgrade bug (#14529) is what a plain overwrite gives.
 */

export type OutboundStatus = "queued" | "sent" | "delivered" | "read" | "failed" | "cancelled"

export interface DeliveryError {
  readonly code: string
  readonly message: string
  readonly provider_code: number | null
}

/** The delivery fields of an outbound message; timestamps are ISO strings. */
export interface Delivery {
  readonly status: OutboundStatus
  readonly error: DeliveryError | null
  readonly sent_at: string | null
  readonly delivered_at: string | null
  readonly read_at: string | null
  readonly failed_at: string | null
}

/** A status the provider reported. */
export interface Incoming {
  readonly status: "sent" | "delivered" | "read" | "failed"
  /** ISO time of the status (Meta's timestamp). */
  readonly at: string
  readonly error: DeliveryError | null
}

export type Merged =
  | { readonly changed: false }
  | {
      readonly changed: true
      readonly next: Delivery
      /** This merge is the first to record that the provider took the message (`message.sent`). */
      readonly accepted: boolean
    }

const unchanged: Merged = { changed: false }

/** The sender's own failure code for a send whose fate it could not tell (contract-messaging §7.3). */
export const OUTCOME_UNKNOWN = "outcome_unknown"

const rank = { queued: 0, sent: 1, delivered: 2, read: 3 } as const

/** What a `failed` status without `errors[]` records, so a failed message always says why. */
const unexplainedFailure: DeliveryError = {
  code: "provider_error",
  message: "The provider reported the message as failed",
  provider_code: null
}

/**
 * Moves to a forward status: its `*_at` is set once, and the steps Meta may skip
 * are filled with the same time (a `read` implies delivered and sent).
 */
const advance = (current: Delivery, status: "sent" | "delivered" | "read", at: string): Delivery => ({
  ...current,
  status,
  error: null,
  failed_at: null,
  sent_at: current.sent_at ?? at,
  delivered_at: status === "sent" ? current.delivered_at : (current.delivered_at ?? at),
  read_at: status === "read" ? (current.read_at ?? at) : current.read_at
})

export const merge = (current: Delivery, incoming: Incoming): Merged => {
  switch (current.status) {
    case "cancelled":
      return unchanged
    case "failed":
      // Only our own "we could not tell" failure yields: the provider did accept it (§7.3).
      if (incoming.status === "failed" || current.error?.code !== OUTCOME_UNKNOWN) return unchanged
      return { changed: true, next: advance(current, incoming.status, incoming.at), accepted: true }
    default: {
      if (incoming.status === "failed") {
        // Delivered or read is a fact a late failure cannot undo.
        if (current.status === "delivered" || current.status === "read") return unchanged
        // Nor is WhatsApp's "sent" undone by our own doubt: its status can come before the send's
        // answer, and a send that then times out learns nothing the status had not told (§7.3).
        if (current.status === "sent" && incoming.error?.code === OUTCOME_UNKNOWN) return unchanged
        return {
          changed: true,
          next: {
            ...current,
            status: "failed",
            error: incoming.error ?? unexplainedFailure,
            failed_at: current.failed_at ?? incoming.at
          },
          accepted: false
        }
      }
      if (rank[incoming.status] <= rank[current.status]) return unchanged
      return {
        changed: true,
        next: advance(current, incoming.status, incoming.at),
        accepted: current.status === "queued"
      }
    }
  }
}
