import { Context } from "effect"

/**
 * Deployment settings for webhooks; the safe values are the defaults. Apart from the service
 * (`Webhooks.ts`) because knowledge's URL fetching reads them too, and the service's module
 * reaches the event catalog, which reaches every slice.
 */
export class WebhookSettings extends Context.Reference<{ readonly allowPrivateUrls: boolean }>("core/WebhookSettings", {
  defaultValue: () => ({ allowPrivateUrls: false })
}) {}
