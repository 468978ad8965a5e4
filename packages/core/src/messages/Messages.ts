import { Context, Effect, Layer } from "effect"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import { ConversationsRepo } from "../conversations/ConversationsRepo.ts"
import { NotFound, type PermissionDenied } from "../Errors.ts"
import * as Pagination from "../Pagination.ts"
import * as Tracing from "../Tracing.ts"
import type { Message } from "./Message.ts"
import { MessagesRepo } from "./MessagesRepo.ts"

type Needs = CurrentPrincipal

/** Reading messages: `messages.view` (`conversations:read` or `messages:send`). */
export class Messages extends Context.Service<
  Messages,
  {
    readonly list: (
      conversationId: string,
      page: Pagination.Page
    ) => Effect.Effect<{ messages: ReadonlyArray<Message>; meta: Pagination.Meta }, PermissionDenied | NotFound, Needs>
    readonly get: (id: string) => Effect.Effect<Message, PermissionDenied | NotFound, Needs>
  }
>()("core/Messages") {
  static readonly layer: Layer.Layer<Messages, never, MessagesRepo | ConversationsRepo> = Layer.effect(
    Messages,
    Effect.gen(function* () {
      const repo = yield* MessagesRepo
      const conversations = yield* ConversationsRepo

      const list = Effect.fnUntraced(function* (conversationId: string, page: Pagination.Page) {
        const principal = yield* authorize("messages.view")
        if ((yield* conversations.find(principal.accountId, conversationId)) === undefined) {
          return yield* new NotFound({ resource: "conversation", id: conversationId })
        }
        const slice = yield* repo.list(principal.accountId, conversationId, page)
        return { messages: slice.items, meta: Pagination.meta(page, slice.total) }
      }, Tracing.span("Messages.list"))

      const get = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("messages.view")
        return (yield* repo.find(principal.accountId, id)) ?? (yield* new NotFound({ resource: "message", id }))
      }, Tracing.span("Messages.get"))

      return Messages.of({ list, get })
    })
  )
}
