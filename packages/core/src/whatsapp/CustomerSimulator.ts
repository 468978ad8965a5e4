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

/**
 * Plays a customer writing in on WhatsApp, as Meta would deliver it (signed, through the real
 * inbound route): offered by the simulator transport only, so its operator route exists only
 * in simulator mode.
 */
export class CustomerSimulator extends Context.Service<
  CustomerSimulator,
  {
    readonly playCustomer: (input: CustomerInput) => Effect.Effect<{ readonly external_id: string }>
  }
>()("core/CustomerSimulator") {}
