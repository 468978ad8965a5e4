import type { GraphTemplate } from "@leadline/core/templates/Template"
import {
  type BusinessAccount,
  type NewGraphTemplate,
  TemplateGraph,
  TemplateGraphError
} from "@leadline/core/templates/TemplateGraph"
import { Clock, Config, Effect, Layer, Redacted, Schema, Scope } from "effect"
import * as MetaSignature from "../meta/MetaSignature.ts"
import * as MetaTemplateWebhook from "../meta/MetaTemplateWebhook.ts"
import { MetaApp } from "../webhook/MetaApp.ts"
import { WebhookReceiver } from "../webhook/WebhookReceiver.ts"

/**
 * `TemplateGraph` that plays Meta offline (docs/contract-messaging.md §8.7): each WABA's templates
 * in memory, empty at start. A created template is PENDING, then after `reviewMs` APPROVED (or
 * REJECTED, for a name starting `rejected_`), announced by a signed `message_template_status_update`
 * webhook through `WebhookReceiver.receive`, the handler behind `POST /webhooks/whatsapp`.
 */

export interface Options {
  /** How long Meta's review takes. */
  readonly reviewMs: number
}

export const defaults: Options = { reviewMs: 1000 }

const isRejected = (name: string) => name.startsWith("rejected_")

export const make = (
  options: Partial<Options> = {}
): Effect.Effect<TemplateGraph["Service"], never, WebhookReceiver | Scope.Scope> =>
  Effect.gen(function* () {
    const { reviewMs } = { ...defaults, ...options }
    const receiver = yield* WebhookReceiver
    const app = yield* MetaApp
    const scope = yield* Scope.Scope
    // Meta's doing, not the caller's: reviews run with what the layer was built with.
    const built = yield* Effect.context<never>()
    const byWaba = new Map<string, Map<string, GraphTemplate>>()
    let nextId = 1_000_000_000_000_000

    const templatesOf = (waba: string) => {
      const known = byWaba.get(waba)
      if (known !== undefined) return known
      const templates = new Map<string, GraphTemplate>()
      byWaba.set(waba, templates)
      return templates
    }

    const review = (waba: string, externalId: string) =>
      Effect.gen(function* () {
        const template = byWaba.get(waba)?.get(externalId)
        if (template === undefined) return
        const status = isRejected(template.name) ? "REJECTED" : "APPROVED"
        const reason = status === "REJECTED" ? "INVALID_FORMAT" : null
        templatesOf(waba).set(externalId, { ...template, status, rejectedReason: reason })
        const raw = MetaTemplateWebhook.templatesPayload(
          waba,
          [
            {
              field: "message_template_status_update",
              event: status,
              reason,
              externalId,
              name: template.name,
              language: template.language
            }
          ],
          new Date(yield* Clock.currentTimeMillis)
        )
        const receipt = yield* receiver.receive(raw, MetaSignature.sign(Redacted.value(app.appSecret), raw))
        if (receipt._tag === "Unauthorized") {
          yield* Effect.logWarning(`WhatsApp simulator: the webhook refused the signature of ${template.name}'s review`)
        }
      }).pipe(
        Effect.delay(reviewMs),
        Effect.catchCause((cause) => Effect.logWarning("WhatsApp simulator: a template review failed", cause)),
        Effect.provideContext(built),
        Effect.forkIn(scope),
        Effect.asVoid
      )

    const list = (account: BusinessAccount) =>
      Effect.sync(() => [...(byWaba.get(account.businessAccountId)?.values() ?? [])])

    const create = (account: BusinessAccount, input: NewGraphTemplate) =>
      Effect.gen(function* () {
        const templates = templatesOf(account.businessAccountId)
        if ([...templates.values()].some((t) => t.name === input.name && t.language === input.language)) {
          // Meta's answer to a name taken in that language.
          return yield* new TemplateGraphError({
            providerCode: 100,
            message: `Message template "${input.name}" already exists in ${input.language}`
          })
        }
        const externalId = String(nextId++)
        templates.set(externalId, {
          externalId,
          name: input.name,
          language: input.language,
          category: input.category,
          status: "PENDING",
          quality: "UNKNOWN",
          rejectedReason: null,
          components: input.components
        })
        yield* review(account.businessAccountId, externalId)
        return { externalId, status: "PENDING", category: input.category }
      })

    const remove = (account: BusinessAccount, template: { readonly name: string; readonly externalId: string }) =>
      Effect.sync(() => {
        byWaba.get(account.businessAccountId)?.delete(template.externalId)
      })

    return TemplateGraph.of({ list, create, remove })
  })

/** The simulator's templates, reviewed in fibers of the layer's scope. */
export const layer = (options: Partial<Options> = {}): Layer.Layer<TemplateGraph, never, WebhookReceiver> =>
  Layer.effect(TemplateGraph, make(options))

/** `WHATSAPP_SIMULATOR_TEMPLATE_REVIEW_MS`: how long the simulated review takes (default 1000). */
export const config: Config.Config<Options> = Config.all({
  reviewMs: Config.schema(
    Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)),
    "WHATSAPP_SIMULATOR_TEMPLATE_REVIEW_MS"
  ).pipe(Config.withDefault(defaults.reviewMs))
})

export const layerConfig: Layer.Layer<TemplateGraph, Config.ConfigError, WebhookReceiver> = Layer.unwrap(
  Effect.map(config, (options) => layer(options))
)
