import * as Slice from "../Slice.ts"
import * as AdminContract from "./AdminContract.ts"
import * as AdminResource from "./AdminResource.ts"
import * as AdminSecurity from "./AdminSecurity.ts"

/** The operator API (accounts, users, keys), as http-adapter's admin/ serves it. */
export const slice = Slice.make({
  name: "admin",
  resources: [AdminResource.resource],
  contract: AdminContract.contract,
  security: AdminSecurity.security
})
