import { Context, Effect, Layer } from "effect"
import { authorize, authorizeFullAccess, type CurrentPrincipal } from "../auth/Principal.ts"
import { type Conflict, decodeInput, type InvalidInput, NotFound, type PermissionDenied } from "../Errors.ts"
import * as Ids from "../Ids.ts"
import * as Pagination from "../Pagination.ts"
import * as Tracing from "../Tracing.ts"
import { type Channel, CreateChannel, UpdateChannel } from "./Channel.ts"
import { ChannelsRepo } from "./ChannelsRepo.ts"

type Needs = CurrentPrincipal

/**
 * The account's WhatsApp numbers. Reading them needs `conversations.view`, so keys that
 * read or send messages can find their channel ids; connecting and changing them needs full
 * access (docs/contract-messaging.md §0a.8).
 */
export class Channels extends Context.Service<
  Channels,
  {
    readonly list: (
      page: Pagination.Page
    ) => Effect.Effect<{ channels: ReadonlyArray<Channel>; meta: Pagination.Meta }, PermissionDenied, Needs>
    readonly get: (id: string) => Effect.Effect<Channel, PermissionDenied | NotFound, Needs>
    readonly create: (input: CreateChannel) => Effect.Effect<Channel, PermissionDenied | Conflict | InvalidInput, Needs>
    readonly update: (
      id: string,
      input: UpdateChannel
    ) => Effect.Effect<Channel, PermissionDenied | NotFound | InvalidInput, Needs>
  }
>()("core/Channels") {
  static readonly layer: Layer.Layer<Channels, never, ChannelsRepo> = Layer.effect(
    Channels,
    Effect.gen(function* () {
      const repo = yield* ChannelsRepo
      const notFound = (id: string) => new NotFound({ resource: "channel", id })
      const decodeCreate = decodeInput(CreateChannel, "channel")
      const decodeUpdate = decodeInput(UpdateChannel, "channel")

      const list = Effect.fnUntraced(function* (page: Pagination.Page) {
        const principal = yield* authorize("conversations.view")
        const slice = yield* repo.list(principal.accountId, page)
        return { channels: slice.items, meta: Pagination.meta(page, slice.total) }
      }, Tracing.span("Channels.list"))

      const get = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("conversations.view")
        return (yield* repo.find(principal.accountId, id)) ?? (yield* notFound(id))
      }, Tracing.span("Channels.get"))

      const create = Effect.fnUntraced(function* (raw: CreateChannel) {
        const principal = yield* authorizeFullAccess
        const input = yield* decodeCreate(raw)
        const now = yield* Ids.now
        const channel: Channel = {
          id: yield* Ids.make("ch"),
          type: "whatsapp",
          name: input.name,
          phone_number_id: input.phone_number_id,
          display_phone_number: input.display_phone_number,
          business_account_id: input.business_account_id ?? null,
          status: "active",
          last_error: null,
          quality_rating: "unknown",
          messaging_limit_tier: null,
          restrictions: [],
          created_at: now,
          updated_at: now
        }
        yield* repo.insert(principal.accountId, channel, input.access_token)
        return channel
      }, Tracing.span("Channels.create"))

      const update = Effect.fnUntraced(function* (id: string, raw: UpdateChannel) {
        const principal = yield* authorizeFullAccess
        const input = yield* decodeUpdate(raw)
        const current = yield* repo.find(principal.accountId, id)
        if (current === undefined) return yield* notFound(id)
        const next: Channel = {
          ...current,
          name: input.name ?? current.name,
          status: input.status ?? current.status,
          // A new token is the fix for a refused one.
          last_error: input.access_token === undefined ? current.last_error : null,
          updated_at: yield* Ids.now
        }
        return (yield* repo.update(principal.accountId, next, input.access_token)) ?? (yield* notFound(id))
      }, Tracing.span("Channels.update"))

      return Channels.of({ list, get, create, update })
    })
  )
}
