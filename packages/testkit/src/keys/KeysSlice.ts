import * as Slice from "../Slice.ts"
import * as KeysContract from "./KeysContract.ts"
import * as KeysResource from "./KeysResource.ts"
import * as KeysSecurity from "./KeysSecurity.ts"

/** An account's own API keys (`/api/keys`), as http-adapter's keys/ serves them. */
export const slice = Slice.make({
  name: "keys",
  resources: [KeysResource.resource],
  contract: KeysContract.contract,
  security: KeysSecurity.security,
  admits: KeysSecurity.admits
})
