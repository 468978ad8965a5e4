import * as Slice from "../Slice.ts"
import * as OrderNoticesContract from "./OrderNoticesContract.ts"
import * as OrderNoticesResource from "./OrderNoticesResource.ts"
import * as OrdersContract from "./OrdersContract.ts"
import * as OrdersResource from "./OrdersResource.ts"
import * as OrdersSecurity from "./OrdersSecurity.ts"

export const slice = Slice.make({
  name: "orders",
  resources: [OrdersResource.resource, OrderNoticesResource.resource],
  contract: (context) => {
    OrdersContract.contract(context)
    OrderNoticesContract.contract(context)
  },
  admits: OrdersSecurity.admits
})
