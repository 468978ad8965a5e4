import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Channel, CreateChannel, UpdateChannel } from "@leadline/core/channels/Channel"
import { Meta, PageQueryFields } from "@leadline/core/Pagination"
import { Id } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import * as Idempotent from "../Idempotent.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Conflict, Forbidden, NotFound, ValidationError } from "../WireErrors.ts"

export const ChannelList = Schema.Struct({ channels: Schema.Array(Channel), meta: Meta }).annotate({
  identifier: "ChannelList"
})

const ChannelId = { id: Id.annotate({ description: "A channel id, `ch_…`" }) }
const READ = "Needs `conversations:read` or `messages:send` (so a key that sends can find its channel ids)."

export class ChannelsApi extends HttpApiGroup.make("channels")
  .add(
    HttpApiEndpoint.get("list", "/", { query: PageQueryFields, success: ChannelList, error: Forbidden }).annotateMerge(
      OpenApi.annotations({ summary: "List WhatsApp channels", description: `Newest first. ${READ}` })
    ),
    Idempotent.create("create", "/", {
      payload: CreateChannel,
      success: Channel,
      error: [Forbidden, Conflict, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Connect a WhatsApp number",
        description:
          "The `access_token` is stored and never returned. A `phone_number_id` belongs to one channel in the whole deployment: 409 `conflict` if it is connected already (in any account). Needs full access."
      })
    ),
    HttpApiEndpoint.get("get", "/:id", {
      params: ChannelId,
      success: Channel,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "Get a channel", description: READ })),
    HttpApiEndpoint.patch("update", "/:id", {
      params: ChannelId,
      payload: UpdateChannel,
      success: Channel,
      error: [Forbidden, NotFound, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Rename, disable or re-key a channel",
        description:
          "A new `access_token` clears `last_error`. A `disabled` channel ignores inbound messages and fails its queued ones. Needs full access."
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/channels")
  .annotateMerge(
    OpenApi.annotations({
      title: "Channels",
      description: "Connected WhatsApp numbers (docs/contract-messaging.md §3)."
    })
  ) {}
