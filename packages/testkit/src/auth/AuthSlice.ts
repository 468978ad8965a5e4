import * as Slice from "../Slice.ts"
import * as AuthContract from "./AuthContract.ts"

/**
 * API keys as credentials; the routes that manage them are the operator API's (admin/) and
 * the account's own (keys/).
 */
export const slice = Slice.make({ name: "auth", resources: [], contract: AuthContract.contract })
