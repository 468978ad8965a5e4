import { Context, type Effect, Schema } from "effect"
import { Text } from "../Text.ts"
import { MAX_KEYWORD_LENGTH } from "./OptOutKeywords.ts"

/** Keywords are compared as `normalize` leaves them, so "Stop!" and " stop " are STOP. */
const Keyword = Text.check(
  Schema.isMinLength(1, { message: "a keyword must not be empty" }),
  Schema.isMaxLength(MAX_KEYWORD_LENGTH, { message: `a keyword must be at most ${MAX_KEYWORD_LENGTH} characters` })
)
const Keywords = Schema.Array(Keyword).check(Schema.isMaxLength(50, { message: "at most 50 keywords" }))
const Reply = Schema.NullOr(
  Text.check(
    Schema.isMinLength(1, { message: "a reply must not be empty (null sends none)" }),
    Schema.isMaxLength(1024, { message: "a reply must be at most 1024 characters" })
  )
)

export const OptOutSettings = Schema.Struct({
  opt_out_keywords: Schema.Array(Schema.String).annotate({
    description: "An inbound text that is one of these, whole, opts its lead out of marketing"
  }),
  opt_in_keywords: Schema.Array(Schema.String).annotate({
    description: "An inbound text that is one of these, whole, opts an opted-out lead back in"
  }),
  opt_out_reply: Schema.NullOr(Schema.String).annotate({
    description: "Sent to a lead that just opted out by keyword; null sends nothing"
  }),
  opt_in_reply: Schema.NullOr(Schema.String).annotate({
    description: "Sent to a lead that just opted back in by keyword; null sends nothing"
  })
}).annotate({ identifier: "OptOutSettings" })
export type OptOutSettings = typeof OptOutSettings.Type

/** `PATCH /api/v1/settings/opt-outs`: what is left out stays as it was. */
export const ConfigureOptOuts = Schema.Struct({
  opt_out_keywords: Schema.optional(Keywords),
  opt_in_keywords: Schema.optional(Keywords),
  opt_out_reply: Schema.optional(Reply),
  opt_in_reply: Schema.optional(Reply)
}).annotate({ identifier: "ConfigureOptOuts" })
export type ConfigureOptOuts = typeof ConfigureOptOuts.Type

/**
 * The common words for "stop" and "start again" in the languages WhatsApp businesses write in most
 * (English as SMS carriers and Twilio use them, Portuguese, Spanish, French, German, Italian).
 * "YES" is left out of the opt-ins: a lead answering a question would opt back in.
 */
export const DEFAULT_SETTINGS: OptOutSettings = {
  opt_out_keywords: [
    "STOP",
    "STOPALL",
    "UNSUBSCRIBE",
    "CANCEL",
    "END",
    "QUIT",
    "PARAR",
    "SAIR",
    "CANCELAR",
    "BAJA",
    "DETENER",
    "ARRET",
    "ARRÊT",
    "STOPP",
    "ABMELDEN",
    "DISISCRIVITI"
  ],
  opt_in_keywords: ["START", "UNSTOP", "SUBSCRIBE", "VOLTAR", "ALTA"],
  opt_out_reply: null,
  opt_in_reply: null
}

/** The accounts' settings; an account that never set them has none (`DEFAULT_SETTINGS`). */
export class OptOutSettingsRepo extends Context.Service<
  OptOutSettingsRepo,
  {
    readonly find: (accountId: string) => Effect.Effect<OptOutSettings | undefined>
    readonly save: (accountId: string, settings: OptOutSettings) => Effect.Effect<void>
  }
>()("core/OptOutSettingsRepo") {}
