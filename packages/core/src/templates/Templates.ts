import { Context, Effect, Layer, Option } from "effect"
import { authorize, authorizeFullAccess } from "../auth/Principal.ts"
import type { Channel } from "../channels/Channel.ts"
import type { Connection } from "../channels/ChannelsRepo.ts"
import { ChannelsRepo } from "../channels/ChannelsRepo.ts"
import { Conflict, decodeInput, type InvalidInput, invalidField, NotFound, type PermissionDenied } from "../Errors.ts"
import * as Ids from "../Ids.ts"
import * as Pagination from "../Pagination.ts"
import * as Tracing from "../Tracing.ts"
import { Transactor } from "../Transactor.ts"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { systemPrincipal } from "../auth/SystemPrincipal.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import * as Versioned from "../Versioned.ts"
import * as TemplateEvents from "./TemplateEvents.ts"
import {
  CreateTemplate,
  type GraphTemplate,
  type MessageTemplate,
  type SyncResult,
  type TemplateUpdate
} from "./Template.ts"
import { WhatsAppProviderError } from "../Errors.ts"
import { type BusinessAccount, TemplateGraph, type TemplateGraphError } from "./TemplateGraph.ts"
import { type TemplateFilter, TemplatesRepo } from "./TemplatesRepo.ts"

type Needs = CurrentPrincipal

const providerError = (error: TemplateGraphError) =>
  new WhatsAppProviderError({ message: error.message, providerCode: error.providerCode })

/** No Graph in this process (an embedding without a transport): the routes that need Meta say so. */
const noGraph = new Conflict({ message: "No WhatsApp transport is configured in this process" })

/**
 * The account's WhatsApp message templates (docs/contract-messaging.md §8.7): read with
 * `conversations.view`, like channels; synced, created and deleted through Meta with full access.
 * Meta's webhooks move a template's status, quality and category (`applyUpdates`).
 */
export class Templates extends Context.Service<
  Templates,
  {
    readonly list: (
      filter: TemplateFilter,
      page: Pagination.Page
    ) => Effect.Effect<{ templates: ReadonlyArray<MessageTemplate>; meta: Pagination.Meta }, PermissionDenied, Needs>
    readonly get: (id: string) => Effect.Effect<MessageTemplate, PermissionDenied | NotFound, Needs>
    /** Every WABA of the account's active channels, from Meta, now. */
    readonly sync: () => Effect.Effect<SyncResult, PermissionDenied | Conflict | WhatsAppProviderError, Needs>
    readonly create: (
      input: CreateTemplate
    ) => Effect.Effect<MessageTemplate, PermissionDenied | InvalidInput | Conflict | WhatsAppProviderError, Needs>
    readonly remove: (
      id: string
    ) => Effect.Effect<
      { id: string; deleted: true },
      PermissionDenied | NotFound | Conflict | WhatsAppProviderError,
      Needs
    >
    /**
     * The scheduled sync's round (no principal): each WABA of the deployment's active channels that
     * no other process holds, claimed until `nextDueMillis` from now. A WABA Meta refuses is logged
     * and freed for the next round; the others go on. How many were synced.
     */
    readonly syncDue: (nextDueMillis: number) => Effect.Effect<number, never, TemplateGraph>
    /** Meta's template webhooks; how many stored templates changed. */
    readonly applyUpdates: (updates: ReadonlyArray<TemplateUpdate>) => Effect.Effect<number>
  }
>()("core/Templates") {
  static readonly layer: Layer.Layer<Templates, never, TemplatesRepo | ChannelsRepo | Transactor | Outbox> =
    Layer.effect(
      Templates,
      Effect.gen(function* () {
        const repo = yield* TemplatesRepo
        const outbox = yield* Outbox
        const channels = yield* ChannelsRepo
        const transactor = yield* Transactor
        const decodeCreate = decodeInput(CreateTemplate, "template")

        const graph = Effect.flatMap(Effect.serviceOption(TemplateGraph), (found) =>
          Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(noGraph)
        )

        const list = Effect.fnUntraced(function* (filter: TemplateFilter, page: Pagination.Page) {
          const principal = yield* authorize("conversations.view")
          const slice = yield* repo.list(principal.accountId, filter, page)
          return { templates: slice.items, meta: Pagination.meta(page, slice.total) }
        }, Tracing.span("Templates.list"))

        const get = Effect.fnUntraced(function* (id: string) {
          const principal = yield* authorize("conversations.view")
          return (yield* repo.find(principal.accountId, id)) ?? (yield* new NotFound({ resource: "template", id }))
        }, Tracing.span("Templates.get"))

        /** `template.updated` in the template's account when a field changed; whether one did. */
        const emitChange = (accountId: string, before: MessageTemplate, after: MessageTemplate) => {
          const previous = Versioned.previousAttributes(before, after)
          if (Object.keys(previous).length === 0) return Effect.succeed(false)
          return emit(TemplateEvents.updated, after, previous).pipe(
            Effect.provideService(Outbox, outbox),
            Effect.provideService(CurrentPrincipal, systemPrincipal(accountId, "whatsapp")),
            Effect.as(true)
          )
        }

        /** Meta's list in place of the stored one; a template keeps its id by name and language. */
        const store = Effect.fnUntraced(function* (
          accountId: string,
          waba: string,
          fetched: ReadonlyArray<GraphTemplate>
        ) {
          const now = yield* Ids.now
          return yield* transactor.withTransaction(
            Effect.gen(function* () {
              const before = (yield* repo.ofBusinessAccount(accountId, waba)).templates
              const byKey = new Map(before.map((template) => [`${template.name}\u0000${template.language}`, template]))
              const templates: Array<MessageTemplate> = []
              const changed: Array<{ before: MessageTemplate; after: MessageTemplate }> = []
              for (const item of fetched) {
                const old = byKey.get(`${item.name}\u0000${item.language}`)
                byKey.delete(`${item.name}\u0000${item.language}`)
                const template: MessageTemplate = {
                  id: old?.id ?? (yield* Ids.make("tpl")),
                  business_account_id: waba,
                  external_id: item.externalId,
                  name: item.name,
                  language: item.language,
                  category: item.category,
                  status: item.status,
                  quality: item.quality,
                  rejected_reason: item.rejectedReason,
                  components: item.components,
                  created_at: old?.created_at ?? now,
                  updated_at: now
                }
                templates.push(template)
                if (old !== undefined) changed.push({ before: old, after: template })
              }
              yield* repo.replace(accountId, waba, templates, now)
              // A sync that finds a template changed (a webhook missed) says so as the webhook would.
              for (const { before, after } of changed) yield* emitChange(accountId, before, after)
              return { business_account_id: waba, templates: templates.length, removed: byKey.size }
            })
          )
        })

        const businessAccount = (connection: Connection): BusinessAccount => ({
          businessAccountId: connection.channel.business_account_id!,
          accessToken: connection.accessToken
        })

        /** One token per WABA: its oldest active channel's. */
        const accountsOf = Effect.fnUntraced(function* (accountId: string) {
          const byWaba = new Map<string, Connection>()
          for (const channel of yield* channels.active(accountId)) {
            const waba = channel.business_account_id
            if (waba === null || byWaba.has(waba)) continue
            const connection = yield* channels.connection(channel.phone_number_id)
            if (connection !== undefined) byWaba.set(waba, connection)
          }
          return byWaba
        })

        const sync = Effect.fnUntraced(function* () {
          const principal = yield* authorizeFullAccess
          const meta = yield* graph
          const byWaba = yield* accountsOf(principal.accountId)
          if (byWaba.size === 0) {
            return yield* new Conflict({ message: "No active channel names a business_account_id: nothing to sync" })
          }
          const results: Array<SyncResult["business_accounts"][number]> = []
          for (const connection of byWaba.values()) {
            const fetched = yield* Effect.mapError(meta.list(businessAccount(connection)), providerError)
            results.push(yield* store(principal.accountId, connection.channel.business_account_id!, fetched))
          }
          return {
            business_accounts: results,
            templates: results.reduce((sum, result) => sum + result.templates, 0)
          }
        }, Tracing.span("Templates.sync"))

        const syncScheduled = Effect.fnUntraced(function* (connection: Connection, nextDueMillis: number) {
          const meta = yield* TemplateGraph
          const waba = connection.channel.business_account_id!
          const now = yield* Ids.now
          const until = new Date(Date.parse(now) + nextDueMillis).toISOString()
          if (!(yield* repo.claimSync(connection.accountId, waba, now, until))) return false
          const fetched = yield* meta
            .list(businessAccount(connection))
            .pipe(Effect.tapError(() => repo.releaseSync(connection.accountId, waba)))
          yield* store(connection.accountId, waba, fetched)
          return true
        })

        const syncDue = Effect.fnUntraced(function* (nextDueMillis: number) {
          const seen = new Set<string>()
          let synced = 0
          for (const connection of yield* channels.withBusinessAccount()) {
            const key = `${connection.accountId}\u0000${connection.channel.business_account_id}`
            if (seen.has(key)) continue
            seen.add(key)
            const done = yield* syncScheduled(connection, nextDueMillis).pipe(
              Effect.catch((error) =>
                Effect.as(
                  Effect.logWarning(
                    `Template sync of business account ${connection.channel.business_account_id} failed: ${error.message}`
                  ),
                  false
                )
              )
            )
            if (done) synced++
          }
          return synced
        }, Tracing.span("Templates.syncDue"))

        const create = Effect.fnUntraced(function* (raw: CreateTemplate) {
          const principal = yield* authorizeFullAccess
          const input = yield* decodeCreate(raw)
          const accountId = principal.accountId
          let channel: Channel | undefined
          if (input.channel_id !== undefined) {
            channel = yield* channels.find(accountId, input.channel_id)
            if (channel === undefined) return yield* invalidField("channel_id", "no such channel in this account")
          } else {
            const active = yield* channels.active(accountId)
            if (active.length === 0) return yield* new Conflict({ message: "No WhatsApp channel is connected" })
            if (active.length > 1) {
              return yield* invalidField("channel_id", "required when the account has more than one active channel")
            }
            channel = active[0]!
          }
          const waba = channel.business_account_id
          if (waba === null) {
            return yield* invalidField("channel_id", "the channel has no business_account_id: templates belong to one")
          }
          const connection = yield* channels.connection(channel.phone_number_id)
          if (connection === undefined) return yield* invalidField("channel_id", "no such channel in this account")
          const meta = yield* graph
          const now = yield* Ids.now
          // Stored before Meta is asked, so a review webhook that beats Meta's answer finds it by
          // name and language; taken out again when Meta refuses.
          const template: MessageTemplate = {
            id: yield* Ids.make("tpl"),
            business_account_id: waba,
            external_id: null,
            name: input.name,
            language: input.language,
            category: input.category,
            status: "PENDING",
            quality: "UNKNOWN",
            rejected_reason: null,
            components: input.components,
            created_at: now,
            updated_at: now
          }
          if (!(yield* transactor.withTransaction(repo.insert(accountId, template)))) {
            return yield* new Conflict({ message: `A template ${input.name} in ${input.language} exists already` })
          }
          const created = yield* meta
            .create(businessAccount(connection), {
              name: input.name,
              language: input.language,
              category: input.category,
              components: input.components
            })
            .pipe(
              Effect.tapError(() => transactor.withTransaction(repo.remove(accountId, [template.id]))),
              Effect.mapError(providerError)
            )
          // Meta may move it to another category (its answer, then `template_category_update`).
          yield* transactor.withTransaction(repo.recordCreated(accountId, template.id, created, yield* Ids.now))
          const stored = yield* repo.find(accountId, template.id)
          if (stored !== undefined) return stored
          // A sync replaced the list while Meta was asked, before Meta listed this one: stored again.
          const answered: MessageTemplate = {
            ...template,
            external_id: created.externalId,
            status: created.status,
            category: created.category
          }
          yield* transactor.withTransaction(repo.insert(accountId, answered))
          return answered
        }, Tracing.span("Templates.create"))

        const remove = Effect.fnUntraced(function* (id: string) {
          const principal = yield* authorizeFullAccess
          const template = yield* repo.find(principal.accountId, id)
          if (template === undefined) return yield* new NotFound({ resource: "template", id })
          const connection = (yield* accountsOf(principal.accountId)).get(template.business_account_id)
          if (connection === undefined) {
            return yield* new Conflict({
              message: `No active channel of business account ${template.business_account_id} to delete it with`
            })
          }
          const meta = yield* graph
          if (template.external_id !== null) {
            yield* Effect.mapError(
              meta.remove(businessAccount(connection), { name: template.name, externalId: template.external_id }),
              providerError
            )
          }
          yield* transactor.withTransaction(repo.remove(principal.accountId, [id]))
          return { id, deleted: true as const }
        }, Tracing.span("Templates.remove"))

        // Each template that changed gets `template.updated` in its account, in the update's transaction.
        const applyUpdates = (updates: ReadonlyArray<TemplateUpdate>) =>
          updates.length === 0
            ? Effect.succeed(0)
            : Effect.flatMap(Ids.now, (now) =>
                transactor.withTransaction(
                  Effect.gen(function* () {
                    let changed = 0
                    for (const update of updates) {
                      for (const { accountId, before, after } of yield* repo.applyUpdate(update, now)) {
                        if (yield* emitChange(accountId, before, after)) changed++
                      }
                    }
                    return changed
                  })
                )
              )

        return Templates.of({ list, get, sync, create, remove, syncDue, applyUpdates })
      })
    )
}
