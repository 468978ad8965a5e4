import * as Slice from "../Slice.ts"
import * as IdempotencyEtag0011 from "./migrations/0011_idempotency_etag.ts"
import * as SqlIdempotency from "./SqlIdempotency.ts"

// Its table came with the historical src/migrations/0001_accounts_leads_idempotency_events.ts.
export const slice = Slice.make({
  name: "idempotency",
  layer: SqlIdempotency.layer,
  migrations: [IdempotencyEtag0011.migration]
})
