import * as Slice from "../Slice.ts"
import * as IdempotencyContract from "./IdempotencyContract.ts"
import * as IdempotencyResource from "./IdempotencyResource.ts"
import * as IdempotencySecurity from "./IdempotencySecurity.ts"

export const slice = Slice.make({
  name: "idempotency",
  resources: [IdempotencyResource.resource],
  contract: IdempotencyContract.contract,
  security: IdempotencySecurity.security
})
