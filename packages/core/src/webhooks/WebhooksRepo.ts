import { Context, type Effect } from "effect"
import type { Listed, Page } from "../Pagination.ts"
import type { Delivery, DeliveryStatus, EndpointRecord } from "./Webhook.ts"

export interface DeliveryFilter {
  readonly endpointId?: string | undefined
  readonly status?: DeliveryStatus | undefined
}

/** Webhook endpoints and the delivery log, always scoped to one account. */
export class WebhooksRepo extends Context.Service<
  WebhooksRepo,
  {
    readonly insertEndpoint: (endpoint: EndpointRecord) => Effect.Effect<void>
    /** Newest first; deleted endpoints are not listed. */
    readonly listEndpoints: (accountId: string, page: Page) => Effect.Effect<Listed<EndpointRecord>>
    /** The endpoint, unless deleted or not the account's. */
    readonly findEndpoint: (accountId: string, id: string) => Effect.Effect<EndpointRecord | undefined>
    /**
     * Replaces the endpoint's fields, its secrets included. Disabling it pauses its pending
     * deliveries (no next attempt); enabling it again makes them due `at` and forgets its failures
     * (`failingSince`). Undefined when it is not there.
     */
    readonly updateEndpoint: (endpoint: EndpointRecord, at: string) => Effect.Effect<EndpointRecord | undefined>
    /** Marks the endpoint deleted and cancels its pending deliveries; false when it was not there. */
    readonly deleteEndpoint: (accountId: string, id: string, at: string) => Effect.Effect<boolean>
    /** Newest first. */
    readonly listDeliveries: (accountId: string, filter: DeliveryFilter, page: Page) => Effect.Effect<Listed<Delivery>>
    readonly findDelivery: (accountId: string, id: string) => Effect.Effect<Delivery | undefined>
    /**
     * Queues the delivery for a fresh round of attempts now; "gone" when its
     * endpoint was deleted, undefined when it is not in the account.
     */
    readonly redeliver: (accountId: string, id: string, at: string) => Effect.Effect<Delivery | "gone" | undefined>
    /**
     * Queues the endpoint's failed deliveries created at or after `since` for a fresh round, oldest
     * first (paused, as its other pending ones, while it is disabled); how many, or undefined when
     * the endpoint is not there.
     */
    readonly recover: (
      accountId: string,
      endpointId: string,
      since: string,
      at: string
    ) => Effect.Effect<number | undefined>
    /**
     * Deletes up to `limit` events recorded before the event id `before` (a ULID floor, so by time),
     * with their deliveries and attempts, skipping any event a delivery still waits for; how many.
     */
    readonly purgeEventsBefore: (before: string, limit: number) => Effect.Effect<number>
    /**
     * Disables the endpoint, pausing its pending deliveries, when it is enabled and has failed every
     * attempt since `failingBefore` or earlier; the endpoint as disabled, or undefined when it was not.
     */
    readonly disableFailing: (
      accountId: string,
      endpointId: string,
      failingBefore: string,
      at: string
    ) => Effect.Effect<EndpointRecord | undefined>
  }
>()("core/WebhooksRepo") {}
