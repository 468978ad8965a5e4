import * as Slice from "../Slice.ts"
import * as OptOutsContract from "./OptOutsContract.ts"
import * as OptOutsResource from "./OptOutsResource.ts"
import * as OptOutsSecurity from "./OptOutsSecurity.ts"

export const slice = Slice.make({
  name: "optouts",
  resources: [OptOutsResource.resource],
  contract: OptOutsContract.contract,
  admits: OptOutsSecurity.admits
})
