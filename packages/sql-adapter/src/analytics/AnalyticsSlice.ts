import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import * as AnalyticsTallies0020 from "./migrations/0020_analytics_tallies.ts"

/**
 * Analytics' storage: the tallies the slices' tables keep by trigger (migration 0020). The slices'
 * stores read them (`internal/tallies.ts`); analytics has no store of its own.
 */
export const slice = Slice.make({ name: "analytics", layer: Layer.empty, migrations: [AnalyticsTallies0020.migration] })
