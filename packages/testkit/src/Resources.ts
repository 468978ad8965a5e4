import * as AdminSlice from "./admin/AdminSlice.ts"
import * as AgentsSlice from "./agents/AgentsSlice.ts"
import * as AnalyticsSlice from "./analytics/AnalyticsSlice.ts"
import * as AuthSlice from "./auth/AuthSlice.ts"
import * as CampaignsSlice from "./campaigns/CampaignsSlice.ts"
import * as CatalogueSlice from "./catalogue/CatalogueSlice.ts"
import * as ChannelsSlice from "./channels/ChannelsSlice.ts"
import * as ConversationsSlice from "./conversations/ConversationsSlice.ts"
import type * as Coverage from "./Coverage.ts"
import * as EventsSlice from "./eventlog/EventsSlice.ts"
import * as IdempotencySlice from "./idempotency/IdempotencySlice.ts"
import * as IdentitySlice from "./identity/IdentitySlice.ts"
import * as KeysSlice from "./keys/KeysSlice.ts"
import * as KnowledgeSlice from "./knowledge/KnowledgeSlice.ts"
import * as LeadsSlice from "./leads/LeadsSlice.ts"
import * as OptOutsSlice from "./optouts/OptOutsSlice.ts"
import * as OrdersSlice from "./orders/OrdersSlice.ts"
import * as TemplatesSlice from "./templates/TemplatesSlice.ts"
import type * as Resource from "./Resource.ts"
import * as WebhooksSlice from "./webhooks/WebhooksSlice.ts"

/**
 * The slices of the testkit, one line each, in folders named as core's. The
 * contract and security runners iterate this list; the generated isolation, scope
 * and fuzz-ledger tests come from its descriptors. A new resource is its folder
 * plus one line here, and the coverage tests fail until it has both.
 */
export const slices = [
  // The platform services:
  AuthSlice.slice,
  IdentitySlice.slice,
  KeysSlice.slice,
  IdempotencySlice.slice,
  WebhooksSlice.slice,
  EventsSlice.slice,
  AnalyticsSlice.slice,
  AdminSlice.slice,
  // One line per resource, in core's Slices.ts order:
  LeadsSlice.slice,
  ChannelsSlice.slice,
  TemplatesSlice.slice,
  ConversationsSlice.slice,
  OptOutsSlice.slice,
  CampaignsSlice.slice,
  CatalogueSlice.slice,
  OrdersSlice.slice,
  KnowledgeSlice.slice,
  AgentsSlice.slice
] as const

/** Every resource's descriptor, in the order of the slices. */
export const all: ReadonlyArray<Resource.Resource> = slices.flatMap((slice) => slice.resources)

/** Tables of the database that no account owns, so the fuzz ledger does not count them: none yet. */
export const globalTables: ReadonlyArray<Coverage.GlobalTable> = []
