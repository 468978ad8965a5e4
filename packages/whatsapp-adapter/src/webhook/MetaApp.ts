import { randomBytes } from "node:crypto"
import { Context, Redacted } from "effect"

/**
 * The Meta app the deployment receives webhooks for (docs/contract-messaging.md §11): the app
 * secret the webhook is signed with and the token of Meta's GET handshake. Without settings,
 * each process makes its own random pair: enough for the simulator and tests; a server that
 * Meta calls sets both (`WHATSAPP_APP_SECRET`, `WHATSAPP_VERIFY_TOKEN`).
 */
export const MetaApp = Context.Reference<{
  readonly appSecret: Redacted.Redacted<string>
  readonly verifyToken: Redacted.Redacted<string>
}>("whatsapp/MetaApp", {
  defaultValue: () => ({
    appSecret: Redacted.make(randomBytes(24).toString("base64url")),
    verifyToken: Redacted.make(randomBytes(24).toString("base64url"))
  })
})
