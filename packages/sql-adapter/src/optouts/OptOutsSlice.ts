import * as Slice from "../Slice.ts"
import * as MarketingOptOuts0034 from "./migrations/0034_marketing_opt_outs.ts"
import * as SqlOptOutSettings from "./SqlOptOutSettings.ts"

/** Each account's opt-out keywords; the leads' `marketing_opt_out` column came with the same migration. */
export const slice = Slice.make({
  name: "optouts",
  layer: SqlOptOutSettings.layer,
  migrations: [MarketingOptOuts0034.migration]
})
