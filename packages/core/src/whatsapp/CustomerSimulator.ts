import { Context, type Effect } from "effect"

/**
 * Plays a customer writing in on WhatsApp, as Meta would deliver it (signed, through the real
 * inbound route): offered by the simulator transport only, so its operator route exists only
 * in simulator mode.
 */
export class CustomerSimulator extends Context.Service<
  CustomerSimulator,
  {
    readonly playCustomer: (input: {
      readonly phoneNumberId: string
      /** Digits as Meta sends them; a leading "+" is dropped. */
      readonly from: string
      readonly name?: string | null | undefined
      readonly text: string
    }) => Effect.Effect<{ readonly external_id: string }>
  }
>()("core/CustomerSimulator") {}
