import { Layer } from "effect"
import * as MemoryAccounts from "./MemoryAccounts.ts"
import * as MemoryIdempotency from "./MemoryIdempotency.ts"
import * as MemoryLeads from "./MemoryLeads.ts"
import * as MemoryWebhooks from "./MemoryWebhooks.ts"
import * as MemoryTransaction from "./MemoryTransaction.ts"

/** Every core port in memory, one fresh set of stores per build. */
export const layer = Layer.mergeAll(
  MemoryTransaction.layer,
  MemoryAccounts.layer,
  MemoryLeads.layer,
  MemoryIdempotency.layer,
  MemoryWebhooks.layer
)
