import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import * as ApiKeysNewestFirst0021 from "./migrations/0021_api_keys_newest_first.ts"
import * as SqlApiKeys from "./SqlApiKeys.ts"

// Its tables came with the historical src/migrations/0001_accounts_leads_idempotency_events.ts.
export const slice = Slice.make({
  name: "auth",
  layer: Layer.merge(SqlApiKeys.layer, SqlApiKeys.changesLayer),
  migrations: [ApiKeysNewestFirst0021.migration]
})
