import * as OpsMetrics from "../observability/OpsMetrics.ts"
import { Clock, Context, Effect, Layer } from "effect"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import { ChannelsRepo } from "../channels/ChannelsRepo.ts"
import { type Conversation, DAY_MILLIS, fresh } from "../conversations/Conversation.ts"
import { ConversationsRepo } from "../conversations/ConversationsRepo.ts"
import {
  Conflict,
  decodeInput,
  type InvalidInput,
  invalidField,
  type LimitReached,
  NotFound,
  type PermissionDenied,
  WindowClosed
} from "../Errors.ts"
import * as Ids from "../Ids.ts"
import { LeadsRepo } from "../leads/LeadsRepo.ts"
import * as TemplateCheck from "../templates/TemplateCheck.ts"
import { TemplatesRepo } from "../templates/TemplatesRepo.ts"
import * as Pagination from "../Pagination.ts"
import * as Tracing from "../Tracing.ts"
import { Transactor } from "../Transactor.ts"
import { MessageUsage } from "../usage/MessageUsage.ts"
import { reserveWithinPlan } from "../usage/PlanQuota.ts"
import * as NewMessage from "./Message.ts"
import { React } from "./Interactive.ts"
import { type Message, type OutboundContent, SendMessage, SendToLead } from "./Message.ts"
import { MessagesRepo } from "./MessagesRepo.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import * as ConversationEvents from "../conversations/ConversationEvents.ts"
import { LeadOptedOut } from "../Errors.ts"
import { OutboundSettings } from "../outbound/OutboundSettings.ts"
import { problemWith } from "../outbound/UrlPolicy.ts"
import { isSendType, type MediaContent } from "./UploadedMedia.ts"
import { UploadedMediaRepo } from "./UploadedMediaRepo.ts"

type Needs = CurrentPrincipal
type SendError = PermissionDenied | NotFound | Conflict | InvalidInput | WindowClosed | LimitReached | LeadOptedOut

/**
 * Reading and sending messages: `messages.view` reads (`conversations:read` or
 * `messages:send`), `messages.send` sends. A send is queued (201 `queued`); the sender
 * worker hands it to the provider.
 */
export class Messages extends Context.Service<
  Messages,
  {
    readonly list: (
      conversationId: string,
      page: Pagination.Page,
      before?: string | undefined
    ) => Effect.Effect<
      { messages: ReadonlyArray<Message>; meta: Pagination.Meta },
      PermissionDenied | NotFound | InvalidInput,
      Needs
    >
    readonly get: (id: string) => Effect.Effect<Message, PermissionDenied | NotFound, Needs>
    /** Into an existing conversation. */
    readonly send: (conversationId: string, input: SendMessage) => Effect.Effect<Message, SendError, Needs>
    /** To a lead: its conversation on the channel is found or made (`pending`). */
    readonly sendToLead: (input: SendToLead) => Effect.Effect<Message, SendError, Needs>
    /**
     * A reaction to message `messageId`, queued in its conversation as a message of type
     * `reaction` (docs/contract-messaging.md §5.5): a session message, so the window's rule holds.
     */
    readonly react: (messageId: string, input: React) => Effect.Effect<Message, SendError, Needs>
    /**
     * An agent's text reply, queued as any send is (the same channel, window and plan checks), with
     * `sender_type: "agent"`. For the agent responder: no principal, the caller's transaction.
     */
    readonly reply: (
      accountId: string,
      conversation: Conversation,
      agentId: string,
      text: string
    ) => Effect.Effect<Message, Conflict | WindowClosed | LimitReached>
    /**
     * A text Leadline itself sends into a conversation (`sender_type: "system"`: a keyword opt-out's
     * confirmation), queued as any send is: no principal, the caller's transaction.
     */
    readonly systemReply: (
      accountId: string,
      conversation: Conversation,
      text: string
    ) => Effect.Effect<Message, Conflict | WindowClosed | LimitReached>
    /**
     * A message the system sends a lead on a user's behalf (an order's status notice), queued as
     * any send is, into the lead's most recent conversation on an active channel: no principal,
     * the caller's transaction. It never starts a conversation (`NotFound` where the lead has
     * none), so a refusal leaves nothing written.
     */
    readonly notify: (
      accountId: string,
      userId: string,
      leadId: string,
      input: SendMessage
    ) => Effect.Effect<Message, NotFound | Conflict | WindowClosed | LimitReached>
  }
>()("core/Messages") {
  static readonly layer: Layer.Layer<
    Messages,
    never,
    | MessagesRepo
    | ConversationsRepo
    | ChannelsRepo
    | TemplatesRepo
    | LeadsRepo
    | AccountsRepo
    | MessageUsage
    | Transactor
    | UploadedMediaRepo
    | Outbox
  > = Layer.effect(
    Messages,
    Effect.gen(function* () {
      const repo = yield* MessagesRepo
      const conversations = yield* ConversationsRepo
      const channels = yield* ChannelsRepo
      const leads = yield* LeadsRepo
      const templates = yield* TemplatesRepo
      const accounts = yield* AccountsRepo
      const usage = yield* MessageUsage
      const transactor = yield* Transactor
      const uploads = yield* UploadedMediaRepo
      const outbound = yield* OutboundSettings
      const outbox = yield* Outbox
      // One service, not a context: merging a context copies every service of the request's.
      const withOutbox = Effect.provideService(Outbox, outbox)
      const decodeSend = decodeInput(SendMessage, "message")
      const decodeSendToLead = decodeInput(SendToLead, "message")
      const decodeReact = decodeInput(React, "reaction")

      const list = Effect.fnUntraced(function* (conversationId: string, page: Pagination.Page, before?: string) {
        const principal = yield* authorize("messages.view")
        if ((yield* conversations.find(principal.accountId, conversationId)) === undefined) {
          return yield* new NotFound({ resource: "conversation", id: conversationId })
        }
        const anchor = before === undefined ? undefined : yield* repo.find(principal.accountId, before)
        if (before !== undefined && anchor?.conversation_id !== conversationId) {
          return yield* invalidField("before", "not a message of this conversation", "query")
        }
        const slice = yield* repo.list(principal.accountId, conversationId, page, anchor)
        return { messages: slice.items, meta: Pagination.meta(page, slice.total) }
      }, Tracing.span("Messages.list"))

      const get = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("messages.view")
        return (yield* repo.find(principal.accountId, id)) ?? (yield* new NotFound({ resource: "message", id }))
      }, Tracing.span("Messages.get"))

      /**
       * A file send's `link` (docs/contract-messaging.md §5.9): WhatsApp fetches it, yet it passes the
       * webhook URLs' rules (no private or internal host), so Leadline never names one to anybody.
       */
      const checkLink = (input: SendMessage) => {
        const field = input.type
        if (!isSendType(field)) return Effect.void
        const link = input[field]?.link
        if (link === undefined) return Effect.void
        const problem = problemWith(link, { allowPrivate: outbound.allowPrivateUrls })
        return problem === undefined
          ? Effect.void
          : Effect.fail(invalidField(`${field}.link`, problem.replace(/^url\b/, "link")))
      }

      /**
       * What a decoded send body says; a file send's uploaded media is looked up in the account (an
       * unknown one is the caller's mistake, §0a.5) and must be of the send's type.
       */
      const contentOf = (accountId: string, input: SendMessage): Effect.Effect<OutboundContent, InvalidInput> => {
        const type = input.type
        if (!isSendType(type)) return Effect.succeed(plainContentOf(input))
        const send = input[type]!
        const content = (media: Omit<MediaContent, "caption">): OutboundContent => ({
          type,
          media: { ...media, caption: send.caption ?? null }
        })
        if (send.id === undefined) {
          return Effect.succeed(
            content({
              media_id: null,
              link: send.link!,
              mime_type: null,
              size: null,
              sha256: null,
              filename: send.filename ?? null
            })
          )
        }
        return Effect.flatMap(uploads.find(accountId, send.id), (media) => {
          if (media === undefined) return Effect.fail(invalidField(`${type}.id`, "no such media in this account"))
          if (media.type !== type) {
            return Effect.fail(invalidField(`${type}.id`, `the media is ${media.mime_type}, sent as ${media.type}`))
          }
          return Effect.succeed(
            content({
              media_id: media.id,
              link: null,
              mime_type: media.mime_type,
              size: media.size,
              sha256: media.sha256,
              // WhatsApp shows a document's name: the uploaded one unless the send gives another.
              filename: type === "document" ? (send.filename ?? media.filename) : null
            })
          )
        })
      }

      /** What a text, template or interactive send body says. */
      const plainContentOf = (input: SendMessage): OutboundContent =>
        input.type === "text"
          ? { type: "text", text: input.text! }
          : input.type === "interactive"
            ? { type: "interactive", interactive: input.interactive! }
            : {
                type: "template",
                template: {
                  name: input.template!.name,
                  language: input.template!.language,
                  components: input.template!.components ?? []
                }
              }

      /**
       * The checks of §5.2 after the conversation is known, in their order, then the queued message
       * `make` builds. Everything but a template is a session message: only inside the window.
       */
      const queueMessage = Effect.fnUntraced(function* (
        accountId: string,
        conversation: Conversation,
        session: boolean,
        make: (placement: NewMessage.Placement, now: string) => Message
      ) {
        const channel = yield* channels.find(accountId, conversation.channel_id)
        if (channel === undefined || channel.status !== "active") {
          return yield* new Conflict({ message: "The channel is disabled" })
        }
        const nowMillis = yield* Clock.currentTimeMillis
        if (
          session &&
          (conversation.last_inbound_at === null || Date.parse(conversation.last_inbound_at) + DAY_MILLIS <= nowMillis)
        ) {
          return yield* new WindowClosed()
        }
        const now = new Date(nowMillis).toISOString()
        yield* reserveWithinPlan(accounts, usage, accountId, now, 1)
        const message = make(
          {
            id: yield* Ids.make("msg"),
            conversation_id: conversation.id,
            lead_id: conversation.lead_id,
            channel_id: channel.id
          },
          now
        )
        yield* repo.insertOutbound(accountId, [message])
        yield* conversations.recordOutbound(accountId, [conversation.id], now)
        yield* OpsMetrics.countMessages("outbound", [message.status])
        return message
      })

      const queue = (
        accountId: string,
        sender: NewMessage.Sender,
        conversation: Conversation,
        content: OutboundContent
      ) =>
        queueMessage(accountId, conversation, content.type !== "template", (placement, now) =>
          NewMessage.outbound(placement, content, sender, now)
        )
      /**
       * A caller's template, against the channel's synced list (§8.7), and the opt-out rule (§8.6):
       * a MARKETING template to an opted-out lead is refused. Only sends through the API: replies and
       * notices are service messages.
       */
      const checkTemplate = Effect.fnUntraced(function* (
        accountId: string,
        conversation: Conversation,
        input: SendMessage
      ) {
        if (input.type !== "template" || input.template === undefined) return
        const channel = yield* channels.find(accountId, conversation.channel_id)
        if (channel === undefined) return
        const stored = yield* TemplateCheck.check(templates, accountId, channel, input.template)
        if (stored?.category !== "MARKETING") return
        const lead = yield* leads.find(accountId, conversation.lead_id)
        if (lead !== undefined && lead.marketing_opt_out !== null) {
          return yield* new LeadOptedOut({ leadId: lead.id, template: stored.name })
        }
      })

      const send = Effect.fnUntraced(function* (conversationId: string, raw: SendMessage) {
        const principal = yield* authorize("messages.send")
        const input = yield* decodeSend(raw)
        yield* checkLink(input)
        return yield* transactor.withTransaction(
          Effect.gen(function* () {
            const conversation = yield* conversations.find(principal.accountId, conversationId)
            if (conversation === undefined) return yield* new NotFound({ resource: "conversation", id: conversationId })
            const content = yield* contentOf(principal.accountId, input)
            yield* checkTemplate(principal.accountId, conversation, input)
            return yield* queue(principal.accountId, { type: "user", id: principal.userId }, conversation, content)
          })
        )
      }, Tracing.span("Messages.send"))

      const sendToLead = Effect.fnUntraced(function* (raw: SendToLead) {
        const principal = yield* authorize("messages.send")
        const { lead_id, channel_id, ...input } = yield* decodeSendToLead(raw)
        yield* checkLink(input)
        const accountId = principal.accountId
        return yield* transactor.withTransaction(
          Effect.gen(function* () {
            // An id in a body that names nothing in the account is the caller's mistake (§0a.5).
            if ((yield* leads.find(accountId, lead_id)) === undefined) {
              return yield* invalidField("lead_id", "no such lead in this account")
            }
            let channelId: string
            if (channel_id !== undefined) {
              if ((yield* channels.find(accountId, channel_id)) === undefined) {
                return yield* invalidField("channel_id", "no such channel in this account")
              }
              channelId = channel_id
            } else {
              const active = yield* channels.active(accountId)
              if (active.length === 0) return yield* new Conflict({ message: "No WhatsApp channel is connected" })
              if (active.length > 1) {
                return yield* invalidField("channel_id", "required when the account has more than one active channel")
              }
              channelId = active[0]!.id
            }
            const content = yield* contentOf(accountId, input)
            const now = yield* Ids.now
            const asked = fresh({
              id: yield* Ids.make("cv"),
              lead_id,
              channel_id: channelId,
              status: "pending",
              contact_wa_id: null,
              now
            })
            const [conversation] = yield* conversations.findOrCreate(accountId, [asked])
            if (conversation!.id === asked.id) yield* emit(ConversationEvents.created, conversation!).pipe(withOutbox)
            yield* checkTemplate(accountId, conversation!, input)
            return yield* queue(accountId, { type: "user", id: principal.userId }, conversation!, content)
          })
        )
      }, Tracing.span("Messages.sendToLead"))

      const react = Effect.fnUntraced(function* (messageId: string, raw: React) {
        const principal = yield* authorize("messages.send")
        const { emoji } = yield* decodeReact(raw)
        const accountId = principal.accountId
        return yield* transactor.withTransaction(
          Effect.gen(function* () {
            const target = yield* repo.find(accountId, messageId)
            if (target === undefined) return yield* new NotFound({ resource: "message", id: messageId })
            if (target.type === "reaction") return yield* new Conflict({ message: "A reaction cannot be reacted to" })
            // WhatsApp names the target by its wamid: a message it has not taken has none yet.
            if (target.external_id === null) {
              return yield* new Conflict({ message: "The message has no WhatsApp id yet: it was not sent" })
            }
            const conversation = yield* conversations.find(accountId, target.conversation_id)
            if (conversation === undefined) return yield* new NotFound({ resource: "message", id: messageId })
            const replyTo = { message_id: target.id, external_id: target.external_id }
            return yield* queueMessage(accountId, conversation, true, (placement, now) =>
              NewMessage.reaction(placement, replyTo, emoji, { type: "user", id: principal.userId }, now)
            )
          })
        )
      }, Tracing.span("Messages.react"))

      const reply = (accountId: string, conversation: Conversation, agentId: string, text: string) =>
        transactor.withTransaction(
          queue(accountId, { type: "agent", id: agentId }, conversation, { type: "text", text })
        )

      const systemReply = (accountId: string, conversation: Conversation, text: string) =>
        transactor.withTransaction(queue(accountId, { type: "system", id: null }, conversation, { type: "text", text }))

      const notify = (accountId: string, userId: string, leadId: string, input: SendMessage) =>
        transactor.withTransaction(
          Effect.gen(function* () {
            // Newest first: the thread the lead wrote in last, if its channel still sends.
            const threads = yield* conversations.list(accountId, { lead_id: leadId }, { limit: 20, offset: 0 })
            const sending = new Set((yield* channels.active(accountId)).map((channel) => channel.id))
            const conversation = threads.items.find((thread) => sending.has(thread.channel_id))
            if (conversation === undefined) return yield* new NotFound({ resource: "conversation", id: leadId })
            // Notices are texts and templates: a file's media id is never a caller's here.
            const content = yield* Effect.orDie(contentOf(accountId, input))
            return yield* queue(accountId, { type: "user", id: userId }, conversation, content)
          })
        )

      return Messages.of({ list, get, send, sendToLead, react, reply, systemReply, notify })
    })
  )
}
