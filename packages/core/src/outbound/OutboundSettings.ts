import { Context } from "effect"

/**
 * Which URLs Leadline may call: webhook receivers and knowledge pages. The safe values are the
 * defaults; `WEBHOOK_ALLOW_PRIVATE_URLS=true` allows http and private addresses (local tests).
 */
export class OutboundSettings extends Context.Reference<{ readonly allowPrivateUrls: boolean }>(
  "core/OutboundSettings",
  { defaultValue: () => ({ allowPrivateUrls: false }) }
) {}
