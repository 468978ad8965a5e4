import * as AgentsSlice from "./agents/AgentsSlice.ts"
import * as AiSlice from "./ai/AiSlice.ts"
import * as CampaignsSlice from "./campaigns/CampaignsSlice.ts"
import * as CatalogueSlice from "./catalogue/CatalogueSlice.ts"
import * as ChannelsSlice from "./channels/ChannelsSlice.ts"
import * as ConversationsSlice from "./conversations/ConversationsSlice.ts"
import * as MessagesSlice from "./messages/MessagesSlice.ts"
import * as KnowledgeSlice from "./knowledge/KnowledgeSlice.ts"
import * as LeadsSlice from "./leads/LeadsSlice.ts"
import * as OptOutsSlice from "./optouts/OptOutsSlice.ts"
import * as OrdersSlice from "./orders/OrdersSlice.ts"
import * as TemplatesSlice from "./templates/TemplatesSlice.ts"
import * as WhatsAppSlice from "./whatsapp/WhatsAppSlice.ts"

/**
 * The resources of the core, one line each, lowest first: a resource imports only resources
 * listed before it, and reacts to an earlier one's change through the hooks that one offers
 * (docs/design.md, "Which resource may import which"). `Services.ts` merges their layers, hooks
 * and reactions, and `EventCatalog.ts` gathers their event types from this list; a new resource
 * is its folder plus one line here. The platform services (accounts, keys, idempotency,
 * webhooks) are not resources: they are listed in `Services.ts`.
 */
export const all = [
  // One line per resource:
  LeadsSlice.slice,
  ChannelsSlice.slice,
  TemplatesSlice.slice,
  ConversationsSlice.slice,
  MessagesSlice.slice,
  WhatsAppSlice.slice,
  OptOutsSlice.slice,
  CampaignsSlice.slice,
  CatalogueSlice.slice,
  OrdersSlice.slice,
  KnowledgeSlice.slice,
  AgentsSlice.slice,
  AiSlice.slice
] as const

export type All = typeof all
