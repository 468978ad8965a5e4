import * as Slice from "../Slice.ts"
import * as CampaignPausesContract from "./CampaignPausesContract.ts"
import * as CampaignsContract from "./CampaignsContract.ts"
import * as CampaignsResource from "./CampaignsResource.ts"
import * as CampaignsSecurity from "./CampaignsSecurity.ts"

export const slice = Slice.make({
  name: "campaigns",
  resources: [CampaignsResource.resource],
  contract: (context) => {
    CampaignsContract.contract(context)
    CampaignPausesContract.contract(context)
  },
  admits: CampaignsSecurity.admits
})
