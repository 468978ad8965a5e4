import type { Principal } from "./Principal.ts"

/**
 * Who acts when no API key does (WhatsApp's webhook, the sender): the system, for one
 * account, so that `Outbox.emit` records events for that account.
 */
export const systemPrincipal = (accountId: string, actor: string): Principal => ({
  accountId,
  userId: "system",
  ownerUserId: "system",
  role: "owner",
  keyId: actor,
  scopes: []
})
