import * as Slice from "../Slice.ts"
import * as TemplatesContract from "./TemplatesContract.ts"
import * as TemplatesResource from "./TemplatesResource.ts"
import * as TemplatesSecurity from "./TemplatesSecurity.ts"

export const slice = Slice.make({
  name: "templates",
  resources: [TemplatesResource.resource],
  contract: TemplatesContract.contract,
  admits: TemplatesSecurity.admits
})
