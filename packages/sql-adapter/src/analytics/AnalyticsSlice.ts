import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import * as AnalyticsTallies0020 from "./migrations/0020_analytics_tallies.ts"
import * as TalliesPlannedSmall0023 from "./migrations/0023_tallies_planned_small.ts"
import * as RowTalliesPlannedOnce0027 from "./migrations/0027_row_tallies_planned_once.ts"

/**
 * Analytics' storage: the tallies the slices' tables keep by trigger (migrations 0020, 0023 and 0027). The slices'
 * stores read them (`internal/tallies.ts`); analytics has no store of its own.
 */
export const slice = Slice.make({
  name: "analytics",
  layer: Layer.empty,
  migrations: [AnalyticsTallies0020.migration, TalliesPlannedSmall0023.migration, RowTalliesPlannedOnce0027.migration]
})
