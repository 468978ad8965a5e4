import * as Slice from "../Slice.ts"
import * as LeadJobsResource from "./LeadJobsResource.ts"
import * as LeadsContract from "./LeadsContract.ts"
import * as LeadsResource from "./LeadsResource.ts"
import * as LeadsSecurity from "./LeadsSecurity.ts"

export const slice = Slice.make({
  name: "leads",
  resources: [LeadsResource.resource, LeadJobsResource.resource],
  contract: LeadsContract.contract,
  security: LeadsSecurity.security,
  admits: LeadsSecurity.admits
})
