import * as Slice from "../Slice.ts"
import * as OrdersContract from "./OrdersContract.ts"
import * as OrdersResource from "./OrdersResource.ts"
import * as OrdersSecurity from "./OrdersSecurity.ts"

export const slice = Slice.make({
  name: "orders",
  resources: [OrdersResource.resource],
  contract: OrdersContract.contract,
  admits: OrdersSecurity.admits
})
