import { Context, type Effect, type Redacted, Schema } from "effect"
import type { GraphTemplate } from "./Template.ts"

/** A WABA and the token of one of its numbers, which Meta's template endpoints take. */
export interface BusinessAccount {
  readonly businessAccountId: string
  readonly accessToken: Redacted.Redacted<string>
}

/** Meta's side failed or refused: `message` is Graph's (it names the field Meta objects to). */
export class TemplateGraphError extends Schema.TaggedError<TemplateGraphError>()("TemplateGraphError", {
  providerCode: Schema.NullOr(Schema.Number),
  message: Schema.String
}) {}

export interface NewGraphTemplate {
  readonly name: string
  readonly language: string
  readonly category: string
  readonly components: ReadonlyArray<unknown>
}

/**
 * A WABA's message templates on Meta's side (`/{waba_id}/message_templates`, docs/contract-messaging.md
 * §8.7). Adapters: the Cloud API client and the simulator. Offered beside the message transport,
 * so the routes and the scheduled sync find it in their context.
 */
export class TemplateGraph extends Context.Service<
  TemplateGraph,
  {
    /** Every page of the WABA's templates. */
    readonly list: (account: BusinessAccount) => Effect.Effect<ReadonlyArray<GraphTemplate>, TemplateGraphError>
    /** Submits one for review: Meta answers its id, status (PENDING, or APPROVED at once) and category. */
    readonly create: (
      account: BusinessAccount,
      template: NewGraphTemplate
    ) => Effect.Effect<
      { readonly externalId: string; readonly status: string; readonly category: string },
      TemplateGraphError
    >
    /** One language of a template (Meta's `hsm_id` with its `name`). */
    readonly remove: (
      account: BusinessAccount,
      template: { readonly name: string; readonly externalId: string }
    ) => Effect.Effect<void, TemplateGraphError>
  }
>()("core/TemplateGraph") {}
