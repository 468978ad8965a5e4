import * as OpsMetrics from "../observability/OpsMetrics.ts"
import { Context, Effect, Fiber, Layer, Metric } from "effect"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import { type Channel, campaignHold } from "../channels/Channel.ts"
import { ChannelsRepo } from "../channels/ChannelsRepo.ts"
import * as TemplateCheck from "../templates/TemplateCheck.ts"
import { TemplatesRepo } from "../templates/TemplatesRepo.ts"
import { fresh } from "../conversations/Conversation.ts"
import {
  Conflict,
  decodeInput,
  type InvalidInput,
  invalidField,
  type LimitReached,
  NotFound,
  type PermissionDenied
} from "../Errors.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import * as Ids from "../Ids.ts"
import { LeadsRepo } from "../leads/LeadsRepo.ts"
import * as NewMessage from "../messages/Message.ts"
import { MessagesRepo } from "../messages/MessagesRepo.ts"
import { OutboundQueue } from "../messages/OutboundQueue.ts"
import * as Pagination from "../Pagination.ts"
import * as Tracing from "../Tracing.ts"
import { Transactor } from "../Transactor.ts"
import { MessageUsage } from "../usage/MessageUsage.ts"
import { reserveWithinPlan } from "../usage/PlanQuota.ts"
import type { Audience } from "../leads/Audience.ts"
import { type Campaign, CreateCampaign, UpdateCampaign } from "./Campaign.ts"
import * as CampaignEvents from "./CampaignEvents.ts"
import { CampaignProgress } from "./CampaignProgress.ts"
import { isEditable, next } from "./CampaignState.ts"
import { view } from "./CampaignView.ts"
import { CampaignsRepo, type QueuedRecipient, type StoredCampaign } from "./CampaignsRepo.ts"
import * as Placeholders from "./Placeholders.ts"
import type { Recipient, RecipientStatus } from "./Recipient.ts"

type Needs = CurrentPrincipal

/**
 * Recipients written per statement when a campaign is queued: a 100,000-lead audience is 20
 * bounded statements rather than one huge one or 100,000 small ones. A setting so that tests can
 * take a small audience through several batches.
 */
export class CampaignQueueBatch extends Context.Reference<number>("core/CampaignQueueBatch", {
  defaultValue: () => 5000
}) {}

const templateOf = (template: CreateCampaign["template"]) => ({
  name: template.name,
  language: template.language,
  components: template.components ?? []
})

const instant = (value: string | null | undefined) => (value == null ? null : new Date(value).toISOString())

/**
 * Campaigns (docs/contract-messaging.md §8): drafts written with `campaigns:write`, queued and cancelled
 * with `campaigns:send`, read with any campaigns scope. Queueing snapshots the audience and
 * creates every recipient's message, reserving their usage, in one transaction; the sender
 * sends them in the campaign lane, and `CampaignProgress` moves the campaign as they leave the
 * queue.
 */
export class Campaigns extends Context.Service<
  Campaigns,
  {
    readonly list: (
      page: Pagination.Page,
      status?: Campaign["status"] | undefined
    ) => Effect.Effect<{ campaigns: ReadonlyArray<Campaign>; meta: Pagination.Meta }, PermissionDenied, Needs>
    readonly get: (id: string) => Effect.Effect<Campaign, PermissionDenied | NotFound, Needs>
    readonly create: (input: CreateCampaign) => Effect.Effect<Campaign, PermissionDenied | InvalidInput, Needs>
    readonly update: (
      id: string,
      input: UpdateCampaign
    ) => Effect.Effect<Campaign, PermissionDenied | NotFound | InvalidInput | Conflict, Needs>
    readonly remove: (
      id: string
    ) => Effect.Effect<{ id: string; deleted: true }, PermissionDenied | NotFound | Conflict, Needs>
    readonly queue: (
      id: string
    ) => Effect.Effect<Campaign, PermissionDenied | NotFound | Conflict | LimitReached | InvalidInput, Needs>
    readonly cancel: (id: string) => Effect.Effect<Campaign, PermissionDenied | NotFound | Conflict, Needs>
    readonly recipients: (
      id: string,
      page: Pagination.Page,
      status?: RecipientStatus | undefined
    ) => Effect.Effect<
      { recipients: ReadonlyArray<Recipient>; meta: Pagination.Meta },
      PermissionDenied | NotFound,
      Needs
    >
  }
>()("core/Campaigns") {
  static readonly layer: Layer.Layer<
    Campaigns,
    never,
    | CampaignsRepo
    | CampaignProgress
    | MessagesRepo
    | ChannelsRepo
    | TemplatesRepo
    | LeadsRepo
    | AccountsRepo
    | MessageUsage
    | OutboundQueue
    | Transactor
    | Outbox
  > = Layer.effect(
    Campaigns,
    Effect.gen(function* () {
      const repo = yield* CampaignsRepo
      const progress = yield* CampaignProgress
      const messages = yield* MessagesRepo
      const channels = yield* ChannelsRepo
      const outbound = yield* OutboundQueue
      const templates = yield* TemplatesRepo
      const leads = yield* LeadsRepo
      const accounts = yield* AccountsRepo
      const usage = yield* MessageUsage
      const transactor = yield* Transactor
      const outbox = yield* Outbox
      const batch = yield* CampaignQueueBatch
      const decodeCreate = decodeInput(CreateCampaign, "campaign")
      const decodeUpdate = decodeInput(UpdateCampaign, "campaign")
      const notFound = (id: string) => new NotFound({ resource: "campaign", id })

      /** Campaigns as the API shows them: drafts with their audience now, the rest with stats from their messages. */
      const views = Effect.fnUntraced(function* (accountId: string, stored: ReadonlyArray<StoredCampaign>) {
        const sent = stored.filter((c) => c.status !== "draft").map((c) => c.id)
        const counts = sent.length === 0 ? new Map() : yield* messages.countsByCampaign(accountId, sent)
        const paused = yield* pauses(accountId, stored)
        return yield* Effect.forEach(stored, (campaign) =>
          campaign.status === "draft"
            ? Effect.map(leads.audienceCount(accountId, campaign.audience), (n) => view(campaign, n, undefined, null))
            : Effect.succeed(view(campaign, null, counts.get(campaign.id) ?? {}, paused.get(campaign.id) ?? null))
        )
      })

      /** Why each sending campaign waits, where its channel is flagged or restricted (§8.2, "paused"). */
      const pauses = Effect.fnUntraced(function* (accountId: string, stored: ReadonlyArray<StoredCampaign>) {
        const found = new Map<string, NonNullable<Campaign["paused"]>>()
        const sending = stored.filter((c) => (c.status === "queued" || c.status === "sending") && c.channel_id !== null)
        if (sending.length === 0) return found
        const now = yield* Ids.now
        const held = new Map<string, Campaign["paused"] | undefined>()
        for (const channelId of new Set(sending.map((c) => c.channel_id!))) {
          const channel = yield* channels.find(accountId, channelId)
          held.set(channelId, channel === undefined ? undefined : pausedBy(channel, now))
        }
        for (const campaign of sending) {
          const hold = held.get(campaign.channel_id!)
          if (hold != null) found.set(campaign.id, hold)
        }
        return found
      })
      const viewOne = (accountId: string, stored: StoredCampaign) =>
        Effect.map(views(accountId, [stored]), ([campaign]) => campaign!)

      const onlyActive = (accountId: string) =>
        Effect.map(channels.active(accountId), (active) => (active.length === 1 ? active[0] : undefined))

      /** §0a.5: ids in a body that name nothing in the account are the caller's mistake, named by path. */
      const checkReferences = Effect.fnUntraced(function* (
        accountId: string,
        channelId: string | null,
        audience: Audience,
        template: TemplateCheck.Named
      ) {
        const channel = channelId === null ? yield* onlyActive(accountId) : yield* channels.find(accountId, channelId)
        if (channelId !== null && channel === undefined) {
          return yield* invalidField("channel_id", "no such channel in this account")
        }
        // The channel known now (its own, or the only active one) judges the template; queue judges again.
        if (channel !== undefined) yield* TemplateCheck.check(templates, accountId, channel, template)
        if (audience.lead_ids.length > 0) {
          const found = new Set(
            (yield* leads.audience(accountId, {
              tags: [],
              statuses: [],
              lead_ids: audience.lead_ids,
              exclude_tags: []
            })).map((lead) => lead.id)
          )
          const missing = audience.lead_ids.findIndex((id) => !found.has(id))
          if (missing >= 0) return yield* invalidField(`audience.lead_ids.${missing}`, "no such lead in this account")
        }
      })

      const list = Effect.fnUntraced(function* (page: Pagination.Page, status?: Campaign["status"]) {
        const principal = yield* authorize("campaigns.view")
        const slice = yield* repo.list(principal.accountId, status, page)
        return { campaigns: yield* views(principal.accountId, slice.items), meta: Pagination.meta(page, slice.total) }
      }, Tracing.span("Campaigns.list"))

      const get = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("campaigns.view")
        const stored = yield* repo.find(principal.accountId, id)
        if (stored === undefined) return yield* notFound(id)
        return yield* viewOne(principal.accountId, stored)
      }, Tracing.span("Campaigns.get"))

      const create = Effect.fnUntraced(function* (raw: CreateCampaign) {
        const principal = yield* authorize("campaigns.create")
        const input = yield* decodeCreate(raw)
        const channelId = input.channel_id ?? null
        yield* checkReferences(principal.accountId, channelId, input.audience, input.template)
        const now = yield* Ids.now
        const stored: StoredCampaign = {
          id: yield* Ids.make("cmp"),
          name: input.name,
          channel_id: channelId,
          template: templateOf(input.template),
          audience: input.audience,
          scheduled_at: instant(input.scheduled_at),
          status: "draft",
          error: null,
          created_at: now,
          updated_at: now,
          queued_at: null,
          started_at: null,
          completed_at: null,
          cancelled_at: null,
          total: 0
        }
        yield* repo.insert(principal.accountId, stored)
        return yield* viewOne(principal.accountId, stored)
      }, Tracing.span("Campaigns.create"))

      /** The campaign, locked, if it is the caller's and a draft. */
      const draft = Effect.fnUntraced(function* (accountId: string, id: string) {
        const [stored] = yield* repo.findForUpdate(accountId, [id])
        if (stored === undefined) return yield* notFound(id)
        if (!isEditable(stored.status)) return yield* new Conflict({ message: "Campaign is not a draft" })
        return stored
      })

      const update = Effect.fnUntraced(function* (id: string, raw: UpdateCampaign) {
        const principal = yield* authorize("campaigns.create")
        const input = yield* decodeUpdate(raw)
        const accountId = principal.accountId
        return yield* transactor.withTransaction(
          Effect.gen(function* () {
            const before = yield* draft(accountId, id)
            const after: StoredCampaign = {
              ...before,
              name: input.name ?? before.name,
              channel_id: input.channel_id === undefined ? before.channel_id : input.channel_id,
              template: input.template === undefined ? before.template : templateOf(input.template),
              audience: input.audience ?? before.audience,
              scheduled_at: input.scheduled_at === undefined ? before.scheduled_at : instant(input.scheduled_at),
              updated_at: yield* Ids.now
            }
            yield* checkReferences(
              accountId,
              after.channel_id,
              after.audience,
              after.template as ReturnType<typeof templateOf>
            )
            yield* repo.update(accountId, after)
            return yield* viewOne(accountId, after)
          })
        )
      }, Tracing.span("Campaigns.update"))

      const remove = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("campaigns.create")
        return yield* transactor.withTransaction(
          Effect.gen(function* () {
            yield* draft(principal.accountId, id)
            yield* repo.remove(principal.accountId, id)
            return { id, deleted: true as const }
          })
        )
      }, Tracing.span("Campaigns.remove"))

      /** The campaign's channel: its own, else the account's only active one (as a send to a lead). */
      const channelFor = Effect.fnUntraced(function* (accountId: string, campaign: StoredCampaign) {
        let channel: Channel | undefined
        if (campaign.channel_id !== null) channel = yield* channels.find(accountId, campaign.channel_id)
        else {
          const active = yield* channels.active(accountId)
          if (active.length > 1) {
            return yield* new Conflict({
              message: "The account has more than one active channel: set the campaign's channel_id"
            })
          }
          channel = active[0]
        }
        if (channel === undefined) return yield* new Conflict({ message: "No WhatsApp channel is connected" })
        if (channel.status !== "active") return yield* new Conflict({ message: "The channel is disabled" })
        return channel
      })

      const queue = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("campaigns.send")
        const accountId = principal.accountId
        return yield* transactor
          .withTransaction(
            Effect.gen(function* () {
              const [campaign] = yield* repo.findForUpdate(accountId, [id])
              if (campaign === undefined) return yield* notFound(id)
              if (campaign.status !== "draft") return yield* new Conflict({ message: "Campaign is not a draft" })
              const channel = yield* channelFor(accountId, campaign)
              yield* TemplateCheck.check(
                templates,
                accountId,
                channel,
                campaign.template as ReturnType<typeof templateOf>
              )
              const audience = yield* leads.audience(accountId, campaign.audience)
              if (audience.length === 0) {
                return yield* new Conflict({ message: "The campaign's audience is empty: no lead matches it" })
              }
              const now = yield* Ids.now
              // A time at or before now means now (§8.2).
              const scheduledAt =
                campaign.scheduled_at !== null && campaign.scheduled_at > now ? campaign.scheduled_at : null
              const template = campaign.template as ReturnType<typeof templateOf>

              // Rendered first: the usage is reserved for exactly the recipients that get a message. A lead
              // that refused marketing (§8.6) gets none.
              const rendered = audience.map((lead): Placeholders.Rendered | { readonly _tag: "OptedOut" } =>
                lead.marketing_opt_out === null ? Placeholders.render(template.components, lead) : { _tag: "OptedOut" }
              )
              const eligible = rendered.filter((r) => r._tag === "Rendered").length

              // All or nothing (§10): a queued campaign never stops half-way for quota.
              if (eligible > 0) yield* reserveWithinPlan(accounts, usage, accountId, now, eligible)

              /** One recipient as stored: skipped, or with its message and the thread to make for it. */
              const recipient = (
                lead: (typeof audience)[number],
                result: (typeof rendered)[number]
              ): QueuedRecipient => {
                if (result._tag !== "Rendered") {
                  return {
                    snapshot: {
                      lead_id: lead.id,
                      phone: lead.phone,
                      message_id: null,
                      skipped:
                        result._tag === "OptedOut"
                          ? { code: "opted_out", message: "The lead opted out of marketing" }
                          : {
                              code: "missing_template_value",
                              message: `${result.placeholder} renders empty for this lead`
                            },
                      created_at: now
                    },
                    message: null,
                    thread: null
                  }
                }
                // Ids from the wall clock without an effect per id: 200,000 of them for a large audience.
                const thread = fresh({
                  id: Ids.makeUnsafe("cv"),
                  lead_id: lead.id,
                  channel_id: channel.id,
                  status: "pending",
                  contact_wa_id: null,
                  now
                })
                const message = NewMessage.fromCampaign(
                  { id: Ids.makeUnsafe("msg"), conversation_id: thread.id, lead_id: lead.id, channel_id: channel.id },
                  { name: template.name, language: template.language, components: result.components },
                  { id: campaign.id, scheduledAt },
                  now
                )
                return {
                  snapshot: {
                    lead_id: lead.id,
                    phone: lead.phone,
                    message_id: message.id,
                    skipped: null,
                    created_at: now
                  },
                  message,
                  thread
                }
              }

              // A broadcast does not move its threads' latest activity: 100,000 conversations would jump to
              // the top of the inbox, and locking them would hold up their inbound messages (docs/decisions.md).
              // Each chunk is built while the store writes the one before (on the same transaction, one
              // statement at a time): the server's work hides behind the database's.
              let writing: Fiber.Fiber<void> | undefined
              for (let start = 0; start < audience.length; start += batch) {
                const chunk: Array<QueuedRecipient> = []
                for (let i = start; i < Math.min(start + batch, audience.length); i++) {
                  chunk.push(recipient(audience[i]!, rendered[i]!))
                }
                if (writing !== undefined) yield* Fiber.join(writing)
                writing = yield* Effect.forkChild(repo.queueRecipients(accountId, campaign.id, chunk))
              }
              if (writing !== undefined) yield* Fiber.join(writing)
              yield* repo.queueWritten(eligible)

              const moved = next(campaign.status, { _tag: "Queue", nothingToSend: eligible === 0 })
              if (moved._tag === "Refused") return yield* new Conflict({ message: moved.message })
              const queued: StoredCampaign = {
                ...campaign,
                channel_id: channel.id,
                status: moved.status,
                queued_at: now,
                completed_at: moved.status === "completed" ? now : null,
                updated_at: now,
                total: audience.length
              }
              yield* repo.update(accountId, queued)
              // Queued on a channel Meta flags or restricts: its messages wait with the others already held.
              const hold = pausedBy(channel, now)
              if (hold != null && eligible > 0) {
                yield* outbound.holdCampaigns(accountId, channel.id, Number.POSITIVE_INFINITY, Date.parse(now))
              }
              const result = view(queued, null, { queued: eligible }, hold ?? null)
              yield* emit(CampaignEvents.queued, result).pipe(Effect.provideService(Outbox, outbox))
              // Every recipient skipped: the campaign is done as it is queued.
              if (result.status === "completed") {
                yield* emit(CampaignEvents.completed, result).pipe(Effect.provideService(Outbox, outbox))
              }
              return result
            })
          )
          .pipe(
            Effect.tap((result) => Metric.update(OpsMetrics.messages("outbound", "queued"), result.stats?.queued ?? 0))
          )
      }, Tracing.span("Campaigns.queue"))

      const cancel = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("campaigns.send")
        const accountId = principal.accountId
        return yield* transactor.withTransaction(
          Effect.gen(function* () {
            const before = yield* repo.find(accountId, id)
            if (before === undefined) return yield* notFound(id)
            const allowed = next(before.status, { _tag: "Cancel" })
            if (allowed._tag === "Refused") return yield* new Conflict({ message: allowed.message })
            const now = yield* Ids.now
            // The messages first, then the campaign: the order the sender's records lock them in.
            yield* progress.cancelRemaining(accountId, id, now)
            const [locked] = yield* repo.findForUpdate(accountId, [id])
            const moved = next(locked!.status, { _tag: "Cancel" })
            if (moved._tag === "Refused") return yield* new Conflict({ message: moved.message })
            const cancelled: StoredCampaign = { ...locked!, status: moved.status, cancelled_at: now, updated_at: now }
            yield* repo.update(accountId, cancelled)
            return yield* viewOne(accountId, cancelled)
          })
        )
      }, Tracing.span("Campaigns.cancel"))

      const recipients = Effect.fnUntraced(function* (id: string, page: Pagination.Page, status?: RecipientStatus) {
        const principal = yield* authorize("campaigns.view")
        if ((yield* repo.find(principal.accountId, id)) === undefined) return yield* notFound(id)
        const slice = yield* repo.recipients(principal.accountId, id, status, page)
        return { recipients: slice.items, meta: Pagination.meta(page, slice.total) }
      }, Tracing.span("Campaigns.recipients"))

      return Campaigns.of({ list, get, create, update, remove, queue, cancel, recipients })
    })
  )
}

/** The campaign's `paused`, where its channel holds it (§8.2): why, as the channel says. */
const pausedBy = (channel: Channel, now: string): Campaign["paused"] | undefined => {
  const hold = campaignHold(channel, now)
  return hold === undefined ? undefined : { reason: hold.reason, message: hold.message }
}
