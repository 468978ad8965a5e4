import * as Slice from "../Slice.ts"
import * as CatalogueContract from "./CatalogueContract.ts"
import * as CatalogueResource from "./CatalogueResource.ts"
import * as CatalogueSecurity from "./CatalogueSecurity.ts"

export const slice = Slice.make({
  name: "catalogue",
  resources: [CatalogueResource.resource],
  contract: CatalogueContract.contract,
  admits: CatalogueSecurity.admits
})
