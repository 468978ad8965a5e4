import { Context, Effect, Layer } from "effect"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import { NotFound, type PermissionDenied } from "../Errors.ts"
import * as Pagination from "../Pagination.ts"
import * as Tracing from "../Tracing.ts"
import type { Conversation, Filters } from "./Conversation.ts"
import { ConversationsRepo } from "./ConversationsRepo.ts"

type Needs = CurrentPrincipal

/** Reading the account's threads: `conversations.view` (`conversations:read` or `messages:send`). */
export class Conversations extends Context.Service<
  Conversations,
  {
    readonly list: (
      filters: Filters,
      page: Pagination.Page
    ) => Effect.Effect<{ conversations: ReadonlyArray<Conversation>; meta: Pagination.Meta }, PermissionDenied, Needs>
    readonly get: (id: string) => Effect.Effect<Conversation, PermissionDenied | NotFound, Needs>
  }
>()("core/Conversations") {
  static readonly layer: Layer.Layer<Conversations, never, ConversationsRepo> = Layer.effect(
    Conversations,
    Effect.gen(function* () {
      const repo = yield* ConversationsRepo

      const list = Effect.fnUntraced(function* (filters: Filters, page: Pagination.Page) {
        const principal = yield* authorize("conversations.view")
        const slice = yield* repo.list(principal.accountId, filters, page)
        return { conversations: slice.items, meta: Pagination.meta(page, slice.total) }
      }, Tracing.span("Conversations.list"))

      const get = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("conversations.view")
        return (yield* repo.find(principal.accountId, id)) ?? (yield* new NotFound({ resource: "conversation", id }))
      }, Tracing.span("Conversations.get"))

      return Conversations.of({ list, get })
    })
  )
}
