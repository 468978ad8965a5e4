import * as Slice from "../Slice.ts"
import * as WebhooksContract from "./WebhooksContract.ts"
import * as WebhooksResource from "./WebhooksResource.ts"
import * as WebhooksSecurity from "./WebhooksSecurity.ts"

/** Endpoints and deliveries; their contract is the generated isolation and scope tests, changes (WebhooksContract.ts), and webhooks*.test.ts. */
export const slice = Slice.make({
  name: "webhooks",
  resources: [WebhooksResource.endpoints, WebhooksResource.deliveries],
  contract: WebhooksContract.contract,
  security: WebhooksSecurity.security,
  admits: WebhooksSecurity.admits
})
