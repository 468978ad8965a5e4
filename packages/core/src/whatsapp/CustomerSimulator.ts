import { Context, type Effect } from "effect"

/** A customer's choice on an interactive message: a reply button, or a list row. */
export type CustomerChoice =
  | { readonly type: "button_reply"; readonly id: string; readonly title: string }
  | {
      readonly type: "list_reply"
      readonly id: string
      readonly title: string
      readonly description?: string | undefined
    }

/** What the customer sends: a text, or a choice on an interactive message, optionally answering one of ours. */
export interface CustomerInput {
  readonly phoneNumberId: string
  /** Digits as Meta sends them; a leading "+" is dropped. */
  readonly from: string
  readonly name?: string | null | undefined
  readonly text?: string | undefined
  readonly choice?: CustomerChoice | undefined
  /** Our id of the outbound message answered (WhatsApp's `context`); required with `choice`. */
  readonly replyTo?: string | undefined
}

/** What Meta says of a number, as `phone_number_quality_update` carries it. */
export interface NumberQualityInput {
  readonly businessAccountId: string
  /** Digits, or E.164. */
  readonly displayPhoneNumber: string
  readonly event: "FLAGGED" | "UNFLAGGED" | "UPGRADE" | "DOWNGRADE"
  readonly currentLimit: string
}

/**
 * Plays a customer writing in on WhatsApp, as Meta would deliver it (signed, through the real
 * inbound route): offered by the simulator transport only, so its operator route exists only
 * in simulator mode.
 */
export class CustomerSimulator extends Context.Service<
  CustomerSimulator,
  {
    readonly playCustomer: (input: CustomerInput) => Effect.Effect<{ readonly external_id: string }>
    /**
     * Plays Meta rating a number (`phone_number_quality_update`, docs/contract-messaging.md §3.1),
     * signed, through the same inbound route: a channel's health, and its campaigns' pause, offline.
     */
    readonly playNumberQuality: (input: NumberQualityInput) => Effect.Effect<void>
  }
>()("core/CustomerSimulator") {}
