import { Context, Effect, Layer, Redacted } from "effect"
import { Templates } from "@leadline/core/templates/Templates"
import { ChannelHealth } from "@leadline/core/whatsapp/ChannelHealth"
import { Inbound, type Receipt } from "@leadline/core/whatsapp/Inbound"
import * as MetaSignature from "../meta/MetaSignature.ts"
import * as MetaTemplateWebhook from "../meta/MetaTemplateWebhook.ts"
import * as MetaWebhook from "../meta/MetaWebhook.ts"
import { MetaApp } from "./MetaApp.ts"

export type Reception =
  | { readonly _tag: "Unauthorized" }
  /** Signed, but no WhatsApp webhook (or a batch far larger than Meta's): nothing was stored. */
  | { readonly _tag: "Malformed"; readonly reason: string }
  | ({ readonly _tag: "Accepted" } & Receipt)

/**
 * Meta's side of the WhatsApp webhook, before core: the handshake's token, the signature over
 * the raw bytes, then Meta's JSON read into core's typed batch (`Inbound.receive`). The route
 * and the simulator both come through here, so the simulator's messages are checked as Meta's are.
 * Nothing is kept raw: the database is first touched by the three ports below, after the
 * signature and the body's shape are checked, and only for what the batch holds.
 */
export class WebhookReceiver extends Context.Service<
  WebhookReceiver,
  {
    /** The GET handshake: the challenge to echo, or undefined (403). */
    readonly handshake: (query: {
      readonly mode: string | undefined
      readonly token: string | undefined
      readonly challenge: string | undefined
    }) => Effect.Effect<string | undefined>
    readonly receive: (raw: Uint8Array, signature: string | undefined) => Effect.Effect<Reception>
  }
>()("whatsapp/WebhookReceiver") {
  static readonly layer: Layer.Layer<WebhookReceiver, never, Inbound | ChannelHealth | Templates> = Layer.effect(
    WebhookReceiver,
    Effect.gen(function* () {
      const inbound = yield* Inbound
      const health = yield* ChannelHealth
      const templates = yield* Templates
      const app = yield* MetaApp
      const secret = Redacted.value(app.appSecret)
      const token = Redacted.value(app.verifyToken)
      return WebhookReceiver.of({
        handshake: (query) =>
          Effect.sync(() =>
            query.mode === "subscribe" && query.challenge !== undefined && MetaSignature.verifyToken(token, query.token)
              ? query.challenge
              : undefined
          ),
        receive: (raw, signature) =>
          Effect.gen(function* () {
            if (!MetaSignature.verify(secret, raw, signature)) return { _tag: "Unauthorized" } as const
            const parsed = MetaWebhook.parse(raw)
            if (parsed._tag === "Malformed") {
              yield* Effect.logWarning(`WhatsApp webhook refused: ${parsed.reason}`)
              return parsed
            }
            // The WABA's template changes are read beside the messages (§8.7), and are not skipped items.
            yield* templates.applyUpdates(MetaTemplateWebhook.parse(raw))
            const skipped = parsed.skipped.filter((item) => !MetaTemplateWebhook.isTemplateChange(item.item))
            for (const item of skipped) {
              yield* Effect.logWarning(`WhatsApp webhook item skipped: ${item.reason}`)
            }
            // A batch of only template or health updates opens no transaction of its own.
            const receipt =
              parsed.changes.length === 0
                ? { stored: 0, duplicates: 0, skipped: 0 }
                : yield* inbound.receive(parsed.changes)
            yield* health.apply(parsed.health)
            return { _tag: "Accepted", ...receipt, skipped: receipt.skipped + skipped.length } as const
          })
      })
    })
  )
}
