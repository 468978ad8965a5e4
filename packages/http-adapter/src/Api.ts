import { HttpApi, OpenApi } from "effect/http-api"
import { CampaignsApi } from "./campaigns/CampaignsApi.ts"
import { CatalogueApi } from "./catalogue/CatalogueApi.ts"
import { OptOutsApi } from "./optouts/OptOutsApi.ts"
import { OrderNoticesApi } from "./orders/OrderNoticesApi.ts"
import { OrdersApi } from "./orders/OrdersApi.ts"
import { KnowledgeApi } from "./knowledge/KnowledgeApi.ts"
import { AgentsApi } from "./agents/AgentsApi.ts"
import { AiApi } from "./ai/AiApi.ts"
import { AnalyticsApi } from "./analytics/AnalyticsApi.ts"
import { AdminApi } from "./admin/AdminApi.ts"
import { IdentityApi } from "./identity/IdentityApi.ts"
import { KeysApi } from "./keys/KeysApi.ts"
import { ChannelsApi } from "./channels/ChannelsApi.ts"
import { TemplatesApi } from "./templates/TemplatesApi.ts"
import { ConversationsApi } from "./conversations/ConversationsApi.ts"
import { MessagesApi } from "./messages/MessagesApi.ts"
import { MediaApi } from "./messages/MediaApi.ts"
import { LeadsApi } from "./leads/LeadsApi.ts"
import { WebhooksApi } from "./webhooks/WebhooksApi.ts"
import { EventsApi } from "./eventlog/EventsApi.ts"
import { StreamApi } from "./eventlog/StreamApi.ts"
import * as OpenApiDocument from "./OpenApiDocument.ts"

export class Api extends HttpApi.make("leadline")
  // The platform services, then one line per resource in core's Slices.ts order:
  .add(IdentityApi)
  .add(KeysApi)
  .add(WebhooksApi)
  .add(EventsApi)
  .add(StreamApi)
  .add(AnalyticsApi)
  .add(AdminApi)
  .add(LeadsApi)
  .add(ChannelsApi)
  .add(TemplatesApi)
  .add(ConversationsApi)
  .add(MessagesApi)
  .add(MediaApi)
  .add(OptOutsApi)
  .add(CampaignsApi)
  .add(CatalogueApi)
  .add(OrdersApi)
  .add(OrderNoticesApi)
  .add(KnowledgeApi)
  .add(AgentsApi)
  .add(AiApi)
  // Unknown body fields are refused rather than dropped: a typo should not pass silently.
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotateMerge(
    OpenApi.annotations({
      title: "Leadline API",
      version: "0.1.0",
      description:
        'Messaging and lead management for WhatsApp-first CRMs. Every request carries `Authorization: Bearer <API key>`. Errors are `{"error", "code"}` JSON; every response has `X-Request-Id`.',
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
      // Redundant `anyOf`s of the generated schemas, tidied once here (see OpenApiDocument.tidy).
      transform: OpenApiDocument.tidy
    })
  ) {}
