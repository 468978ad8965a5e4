import { Context, Effect, Layer } from "effect"
import { authorize, authorizeFullAccess, type CurrentPrincipal } from "../auth/Principal.ts"
import { decodeInput, type InvalidInput, invalidField, type PermissionDenied } from "../Errors.ts"
import * as Ids from "../Ids.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import * as LeadEvents from "../leads/LeadEvents.ts"
import { LeadsRepo } from "../leads/LeadsRepo.ts"
import * as Versioned from "../Versioned.ts"
import type { Received } from "../messages/InboundReceived.ts"
import { Messages } from "../messages/Messages.ts"
import * as Tracing from "../Tracing.ts"
import { Transactor } from "../Transactor.ts"
import { intentOf, mayBeKeyword, normalize } from "./OptOutKeywords.ts"
import { ConfigureOptOuts, DEFAULT_SETTINGS, type OptOutSettings, OptOutSettingsRepo } from "./OptOutSettings.ts"

/** Each keyword once, as it is compared (`normalize`), in the order given. */
const tidy = (keywords: ReadonlyArray<string>) => [...new Set(keywords.map(normalize))]

/**
 * Marketing opt-outs by keyword (docs/contract-messaging.md §8.6): an inbound text that is one of the
 * account's opt-out keywords sets its lead's `marketing_opt_out`, an opt-in keyword clears it, each
 * in the transaction that stored the message, with the account's confirmation queued as a reply
 * when it has one. Campaigns skip opted-out leads; replies to them still go.
 */
export class OptOuts extends Context.Service<
  OptOuts,
  {
    readonly settings: () => Effect.Effect<OptOutSettings, PermissionDenied, CurrentPrincipal>
    readonly configure: (
      input: unknown
    ) => Effect.Effect<OptOutSettings, PermissionDenied | InvalidInput, CurrentPrincipal>
    /** New inbound messages, in the transaction that stored them (the `InboundReceived` hook). */
    readonly received: (received: Received) => Effect.Effect<void, never, CurrentPrincipal>
  }
>()("core/OptOuts") {
  static readonly layer: Layer.Layer<OptOuts, never, OptOutSettingsRepo | LeadsRepo | Messages | Transactor | Outbox> =
    Layer.effect(
      OptOuts,
      Effect.gen(function* () {
        const repo = yield* OptOutSettingsRepo
        const leads = yield* LeadsRepo
        const messages = yield* Messages
        const transactor = yield* Transactor
        const outbox = yield* Outbox
        const decode = decodeInput(ConfigureOptOuts, "settings")

        const settings = Effect.fnUntraced(function* () {
          const principal = yield* authorize("leads.view")
          return (yield* repo.find(principal.accountId)) ?? DEFAULT_SETTINGS
        }, Tracing.span("OptOuts.settings"))

        const configure = Effect.fnUntraced(function* (raw: unknown) {
          const principal = yield* authorizeFullAccess
          const input = yield* decode(raw)
          for (const field of ["opt_out_keywords", "opt_in_keywords"] as const) {
            const index = (input[field] ?? []).findIndex((keyword) => normalize(keyword) === "")
            if (index >= 0) return yield* invalidField(`${field}.${index}`, "must hold a letter or a digit")
          }
          return yield* transactor.withTransaction(
            Effect.gen(function* () {
              const current = (yield* repo.find(principal.accountId)) ?? DEFAULT_SETTINGS
              const saved: OptOutSettings = {
                opt_out_keywords: tidy(input.opt_out_keywords ?? current.opt_out_keywords),
                opt_in_keywords: tidy(input.opt_in_keywords ?? current.opt_in_keywords),
                opt_out_reply: input.opt_out_reply === undefined ? current.opt_out_reply : input.opt_out_reply,
                opt_in_reply: input.opt_in_reply === undefined ? current.opt_in_reply : input.opt_in_reply
              }
              const both = saved.opt_in_keywords.findIndex((keyword) => saved.opt_out_keywords.includes(keyword))
              if (both >= 0) {
                return yield* invalidField(`opt_in_keywords.${both}`, "is an opt-out keyword too")
              }
              yield* repo.save(principal.accountId, saved)
              return saved
            })
          )
        }, Tracing.span("OptOuts.configure"))

        const received = ({ accountId, messages: arrived, threads }: Received) =>
          Effect.gen(function* () {
            const texts = arrived.filter((message) => message.type === "text" && mayBeKeyword(message.text))
            if (texts.length === 0) return
            const wanted = (yield* repo.find(accountId)) ?? DEFAULT_SETTINGS
            // A lead's last keyword in the batch decides, and its thread gets the confirmation.
            const last = new Map<string, { intent: "opt_out" | "opt_in"; keyword: string; conversationId: string }>()
            for (const message of texts) {
              const intent = intentOf(wanted, message.text)
              if (intent === undefined) continue
              last.set(message.lead_id, {
                intent,
                keyword: normalize(message.text!),
                conversationId: message.conversation_id
              })
            }
            if (last.size === 0) return
            const now = yield* Ids.now
            const changed = new Set<string>()
            for (const [leadId, { intent, keyword }] of last) {
              const optOut =
                intent === "opt_out" ? { at: now, source: "whatsapp_keyword" as const, reason: keyword } : null
              const before = yield* leads.find(accountId, leadId)
              for (const id of yield* leads.setMarketingOptOut(accountId, [leadId], optOut, now)) changed.add(id)
              // The change is the lead's like a PATCH's: `lead.updated`, with what it was.
              const after = changed.has(leadId) ? yield* leads.find(accountId, leadId) : undefined
              if (before !== undefined && after !== undefined) {
                yield* emit(LeadEvents.updated, after, Versioned.previousAttributes(before, after)).pipe(
                  Effect.provideService(Outbox, outbox)
                )
              }
            }
            for (const [leadId, { intent, conversationId }] of last) {
              const reply = intent === "opt_out" ? wanted.opt_out_reply : wanted.opt_in_reply
              const thread = threads.find((conversation) => conversation.id === conversationId)
              if (!changed.has(leadId) || reply === null || thread === undefined) continue
              // The lead just wrote, so the window is open; a plan at its limit or a channel turned off
              // skips the confirmation, never the opt-out.
              yield* messages
                .systemReply(accountId, thread, reply)
                .pipe(
                  Effect.catch((reason) =>
                    Effect.logInfo("Opt-out confirmation skipped", { lead_id: leadId, reason: reason._tag })
                  )
                )
            }
          })

        return OptOuts.of({ settings, configure, received })
      })
    )
}
