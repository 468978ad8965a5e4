import type { CampaignStatus as Status } from "./Campaign.ts"

/**
 * A campaign's states and what moves it (docs/contract-messaging.md §8.2):
 *
 * ```
 * draft ──queue──► queued ──first claim──► sending ──no queued message left──► completed
 *                    │                        │ └── template-level error ──► failed
 *                    └────────cancel──────────┴──► cancelled
 * ```
 */
export type CampaignStatus = typeof Status.Type

export type Move =
  /** `POST …/queue`; `nothingToSend` when every recipient was skipped: it completes at once. */
  | { readonly _tag: "Queue"; readonly nothingToSend: boolean }
  /** The sender claimed its first message. */
  | { readonly _tag: "Start" }
  /** The last queued message left the queue. */
  | { readonly _tag: "Finish" }
  /** WhatsApp refused the template itself (132000, 132001, 132015). */
  | { readonly _tag: "Fail" }
  /** `POST …/cancel`. */
  | { readonly _tag: "Cancel" }

export type Outcome =
  | { readonly _tag: "Moved"; readonly status: CampaignStatus }
  | { readonly _tag: "Refused"; readonly message: string }

const refused = (message: string): Outcome => ({ _tag: "Refused", message })
const moved = (status: CampaignStatus): Outcome => ({ _tag: "Moved", status })

/** Edit and delete are for drafts only. */
export const isEditable = (status: CampaignStatus): boolean => status === "draft"

/** Where `move` takes a campaign in `status`; refused moves carry the 409's message. */
export const next = (status: CampaignStatus, move: Move): Outcome => {
  switch (move._tag) {
    case "Queue":
      return status === "draft"
        ? moved(move.nothingToSend ? "completed" : "queued")
        : refused("Campaign is not a draft")
    case "Start":
      return status === "queued" ? moved("sending") : refused(`Campaign is ${status}, not queued`)
    case "Finish":
      return status === "queued" || status === "sending" ? moved("completed") : refused(`Campaign is ${status}`)
    case "Fail":
      return status === "queued" || status === "sending" ? moved("failed") : refused(`Campaign is ${status}`)
    case "Cancel":
      return status === "queued" || status === "sending"
        ? moved("cancelled")
        : refused(status === "draft" ? "Campaign is a draft: delete it instead" : `Campaign is already ${status}`)
  }
}
