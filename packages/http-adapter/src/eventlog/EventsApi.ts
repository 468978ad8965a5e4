import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Envelope } from "@leadline/core/EventCatalog"
import { EventListMeta, EventListQuery } from "@leadline/core/eventlog/Events"
import { Authentication } from "../Authentication.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Forbidden, ValidationError } from "../WireErrors.ts"

export const EventList = Schema.Struct({ events: Schema.Array(Envelope), meta: EventListMeta }).annotate({
  identifier: "EventList"
})

export class EventsApi extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/", { query: EventListQuery, success: EventList, error: [Forbidden, ValidationError] })
      // A misspelt filter would otherwise list every event: unknown parameters are a 400.
      .annotate(HttpApi.QueryParseOptions, { onExcessProperty: "error", errors: "all" })
      .annotateMerge(
        OpenApi.annotations({
          summary: "List events",
          description:
            "The account's events of the last 30 days, newest first, each as its webhook delivery carried it (a delivery's `webhook-id` header is the event's `id`): what a receiver that missed deliveries reads to catch up. `type` narrows to some types (`lead.updated,conversation.assigned`) or families (`lead.*`); `created_after` and `created_before` to a time; pages by cursor (`starting_after`, `ending_before`). A key sees the types of the resources it may read (`lead.*` with `leads:read`, `message.*` and `conversation.*` with `conversations:read`, …); asking for a type it may not see is a 403 naming the scope."
        })
      )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/events")
  .annotateMerge(
    OpenApi.annotations({
      title: "Events",
      description: "Every change as an event: the log that webhook deliveries come from."
    })
  ) {}
