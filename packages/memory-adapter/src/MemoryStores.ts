import { Layer } from "effect"
import * as MemoryAccounts from "./accounts/MemoryAccounts.ts"
import * as MemoryAgentJobs from "./agents/MemoryAgentJobs.ts"
import * as MemoryAgents from "./agents/MemoryAgents.ts"
import * as MemoryApiKeys from "./auth/MemoryApiKeys.ts"
import * as MemoryCampaigns from "./campaigns/MemoryCampaigns.ts"
import * as MemoryCatalogue from "./catalogue/MemoryCatalogue.ts"
import * as MemoryChannels from "./channels/MemoryChannels.ts"
import * as MemoryConversations from "./conversations/MemoryConversations.ts"
import * as MemoryIdempotency from "./idempotency/MemoryIdempotency.ts"
import * as MemoryKnowledge from "./knowledge/MemoryKnowledge.ts"
import * as MemoryLeadJobs from "./leads/MemoryLeadJobs.ts"
import * as MemoryLeads from "./leads/MemoryLeads.ts"
import * as MemoryMedia from "./messages/MemoryMedia.ts"
import * as MemoryMessages from "./messages/MemoryMessages.ts"
import * as MemoryUploadedMedia from "./messages/MemoryUploadedMedia.ts"
import * as MemoryOptOutSettings from "./optouts/MemoryOptOutSettings.ts"
import * as MemoryOrderNoticeSettings from "./orders/MemoryOrderNoticeSettings.ts"
import * as MemoryOrders from "./orders/MemoryOrders.ts"
import { OrderInputs } from "@leadline/core/orders/OrderInputs"
import * as MemoryTemplates from "./templates/MemoryTemplates.ts"
import * as MemoryTransaction from "./MemoryTransaction.ts"
import * as MemoryMessageUsage from "./usage/MemoryMessageUsage.ts"
import * as MemoryWebhooks from "./webhooks/MemoryWebhooks.ts"

/**
 * The store of every slice, one line each; a new resource is its folder plus
 * one line here. A store may use the ports of the lines above it (API keys
 * read users and accounts through `AccountsRepo`).
 */
export const all = [
  MemoryTransaction.layer,
  // The platform services:
  MemoryAccounts.layer,
  MemoryApiKeys.layer,
  MemoryIdempotency.layer,
  MemoryWebhooks.layer,
  MemoryMessageUsage.layer,
  // One line per resource, in core's Slices.ts order:
  MemoryLeads.layer,
  MemoryLeadJobs.layer,
  MemoryChannels.layer,
  MemoryTemplates.layer,
  MemoryConversations.layer,
  MemoryMessages.layer,
  MemoryMedia.layer,
  MemoryUploadedMedia.layer,
  MemoryOptOutSettings.layer,
  MemoryCampaigns.layer,
  MemoryCatalogue.layer,
  MemoryOrders.layer,
  OrderInputs.fromRepos,
  MemoryOrderNoticeSettings.layer,
  MemoryKnowledge.layer,
  MemoryAgents.layer,
  MemoryAgentJobs.layer
] as const

type Stores = (typeof all)[number]

/**
 * Every core port in memory, one fresh set of stores per build. Folding the list
 * loses the tuple, so the type is restated from the same list.
 */
export const layer = all.reduce<Layer.Layer<never, unknown, unknown>>(
  (above, store) => Layer.provideMerge(store as Layer.Layer<never, unknown, unknown>, above),
  Layer.empty
) as Layer.Layer<Layer.Success<Stores>, Layer.Error<Stores>, Exclude<Layer.Services<Stores>, Layer.Success<Stores>>>
