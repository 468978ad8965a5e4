import * as Slice from "../Slice.ts"
import * as AccountsNewestFirst0022 from "./migrations/0022_accounts_newest_first.ts"
import * as SqlAccounts from "./SqlAccounts.ts"

// Its tables came with the historical src/migrations/0001_accounts_leads_idempotency_events.ts.
export const slice = Slice.make({
  name: "accounts",
  layer: SqlAccounts.layer,
  migrations: [AccountsNewestFirst0022.migration]
})
