import * as Slice from "../Slice.ts"
import * as WebhooksResource from "./WebhooksResource.ts"
import * as WebhooksSecurity from "./WebhooksSecurity.ts"

/** Endpoints and deliveries; their contract is the generated isolation and scope tests, and webhooks*.test.ts. */
export const slice = Slice.make({
  name: "webhooks",
  resources: [WebhooksResource.endpoints, WebhooksResource.deliveries],
  security: WebhooksSecurity.security,
  admits: WebhooksSecurity.admits
})
