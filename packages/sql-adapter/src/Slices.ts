import * as AccountsSlice from "./accounts/AccountsSlice.ts"
import * as AgentsSlice from "./agents/AgentsSlice.ts"
import * as AnalyticsSlice from "./analytics/AnalyticsSlice.ts"
import * as AuthSlice from "./auth/AuthSlice.ts"
import * as CampaignsSlice from "./campaigns/CampaignsSlice.ts"
import * as CatalogueSlice from "./catalogue/CatalogueSlice.ts"
import * as ChannelsSlice from "./channels/ChannelsSlice.ts"
import * as ConversationsSlice from "./conversations/ConversationsSlice.ts"
import * as IdempotencySlice from "./idempotency/IdempotencySlice.ts"
import * as KnowledgeSlice from "./knowledge/KnowledgeSlice.ts"
import * as LeadsSlice from "./leads/LeadsSlice.ts"
import * as MessagesSlice from "./messages/MessagesSlice.ts"
import * as OptOutsSlice from "./optouts/OptOutsSlice.ts"
import * as OrdersSlice from "./orders/OrdersSlice.ts"
import * as TemplatesSlice from "./templates/TemplatesSlice.ts"
import * as UsageSlice from "./usage/UsageSlice.ts"
import * as WebhooksSlice from "./webhooks/WebhooksSlice.ts"

/**
 * The resources of the SQL adapter, one line each, in the folders of the same
 * name as core's. `SqlStores.ts` merges their layers and `Migrations.ts` runs
 * their migrations from this list: a new resource is its folder plus one line here.
 */
export const all = [
  // The platform services:
  AccountsSlice.slice,
  AuthSlice.slice,
  IdempotencySlice.slice,
  WebhooksSlice.slice,
  UsageSlice.slice,
  AnalyticsSlice.slice,
  // One line per resource, in core's Slices.ts order:
  LeadsSlice.slice,
  ChannelsSlice.slice,
  TemplatesSlice.slice,
  ConversationsSlice.slice,
  MessagesSlice.slice,
  OptOutsSlice.slice,
  CampaignsSlice.slice,
  CatalogueSlice.slice,
  OrdersSlice.slice,
  KnowledgeSlice.slice,
  AgentsSlice.slice
] as const
