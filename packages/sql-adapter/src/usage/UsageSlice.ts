import * as Slice from "../Slice.ts"
import * as MessageUsage0006 from "./migrations/0006_message_usage.ts"
import * as SqlMessageUsage from "./SqlMessageUsage.ts"

/** Messages counted per account and month (docs/contract-messaging.md §10). */
export const slice = Slice.make({
  name: "usage",
  layer: SqlMessageUsage.layer,
  migrations: [MessageUsage0006.migration]
})
