import * as Slice from "../Slice.ts"
import * as CampaignsContract from "./CampaignsContract.ts"
import * as CampaignsResource from "./CampaignsResource.ts"
import * as CampaignsSecurity from "./CampaignsSecurity.ts"

export const slice = Slice.make({
  name: "campaigns",
  resources: [CampaignsResource.resource],
  contract: CampaignsContract.contract,
  admits: CampaignsSecurity.admits
})
