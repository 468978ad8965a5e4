import * as Slice from "../Slice.ts"
import * as AnalyticsContract from "./AnalyticsContract.ts"
import * as AnalyticsResource from "./AnalyticsResource.ts"
import * as AnalyticsSecurity from "./AnalyticsSecurity.ts"

export const slice = Slice.make({
  name: "analytics",
  resources: [AnalyticsResource.resource],
  contract: AnalyticsContract.contract,
  admits: AnalyticsSecurity.admits
})
