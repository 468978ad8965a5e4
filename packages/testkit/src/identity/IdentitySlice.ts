import * as Slice from "../Slice.ts"
import * as IdentityContract from "./IdentityContract.ts"
import * as IdentityResource from "./IdentityResource.ts"
import * as IdentitySecurity from "./IdentitySecurity.ts"

export const slice = Slice.make({
  name: "identity",
  resources: [IdentityResource.resource],
  contract: IdentityContract.contract,
  admits: IdentitySecurity.admits
})
