import * as AgentsSlice from "./agents/AgentsSlice.ts"
import * as AiSlice from "./ai/AiSlice.ts"
import * as CampaignsSlice from "./campaigns/CampaignsSlice.ts"
import * as CatalogueSlice from "./catalogue/CatalogueSlice.ts"
import * as ChannelsSlice from "./channels/ChannelsSlice.ts"
import * as ConversationsSlice from "./conversations/ConversationsSlice.ts"
import * as MessagesSlice from "./messages/MessagesSlice.ts"
import * as KnowledgeSlice from "./knowledge/KnowledgeSlice.ts"
import * as LeadsSlice from "./leads/LeadsSlice.ts"
import * as OrdersSlice from "./orders/OrdersSlice.ts"

/**
 * The resources of the core, one line each. `Services.ts` merges their layers and
 * `EventCatalog.ts` gathers their event types from this list; a new resource is its
 * folder plus one line here. The platform services (accounts, keys, idempotency,
 * webhooks) are not resources: they are listed in `Services.ts`.
 */
export const all = [
  // One line per resource:
  LeadsSlice.slice,
  ChannelsSlice.slice,
  ConversationsSlice.slice,
  MessagesSlice.slice,
  CampaignsSlice.slice,
  CatalogueSlice.slice,
  OrdersSlice.slice,
  KnowledgeSlice.slice,
  AgentsSlice.slice,
  AiSlice.slice
] as const

export type All = typeof all
