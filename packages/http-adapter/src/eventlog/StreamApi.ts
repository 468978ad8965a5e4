import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Envelope, EventType } from "@leadline/core/EventCatalog"
import { EventStreamQuery } from "@leadline/core/eventlog/EventStream"
import { Authentication } from "../Authentication.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Forbidden, ValidationError } from "../WireErrors.ts"

/** The last message of a stream that fell too far behind: resume with `Last-Event-ID` set to `last_event_id`. */
export const ResetNotice = Schema.Struct({
  reason: Schema.Literal("too_far_behind"),
  last_event_id: Schema.NullOr(Schema.String).annotate({
    description: "The id of the last event this stream sent (the resume point), or null when it sent none"
  })
}).annotate({ identifier: "StreamReset" })

/** One SSE message of the stream: an event (`id:` its id, `event:` its type, `data:` its envelope), or the reset. */
export const StreamMessage = Schema.Union([
  Schema.Struct({ id: Schema.String, event: EventType, data: Schema.fromJsonString(Envelope) }),
  Schema.Struct({ event: Schema.Literal("reset"), data: Schema.fromJsonString(ResetNotice) })
]).annotate({ identifier: "StreamMessage" })

export const StreamHeaders = Schema.Struct({
  "last-event-id": Schema.optional(
    Schema.String.annotate({ description: "Resume after this event: what EventSource sends when it reconnects" })
  )
})

export class StreamApi extends HttpApiGroup.make("stream")
  .add(
    HttpApiEndpoint.get("open", "/", {
      query: EventStreamQuery,
      headers: StreamHeaders,
      success: HttpApiSchema.StreamSse({ events: StreamMessage }),
      error: [Forbidden, ValidationError]
    })
      .annotate(HttpApi.QueryParseOptions, { onExcessProperty: "error", errors: "all" })
      .annotateMerge(
        OpenApi.annotations({
          summary: "Stream events",
          description:
            'Server-Sent Events of the account\'s events as they commit, each `data:` the envelope a webhook delivery carries, `id:` the event\'s id and `event:` its type; a key sees the types it may read (as `GET /api/v1/events`), narrowed by `type`. `Last-Event-ID` (or `last_event_id`) resumes after that event of the log with nothing lost or repeated. A comment line (`: heartbeat`) comes every 15 s. A client too far behind gets `event: reset` with `{"reason": "too_far_behind", "last_event_id"}` and the stream ends: reconnect with that id.'
        })
      )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/stream")
  .annotateMerge(
    OpenApi.annotations({
      title: "Stream",
      description: "The account's events live, over Server-Sent Events, for clients that cannot receive webhooks."
    })
  ) {}
