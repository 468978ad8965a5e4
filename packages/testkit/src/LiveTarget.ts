import type { Target } from "./TestServer.ts"

/**
 * A running Leadline to test, from the environment: `LEADLINE_URL` (its base URL;
 * `LEADLINE_CONTRACT_URL` is read too, the name earlier versions used) and `LEADLINE_ADMIN_TOKEN`
 * (the operator token the suites make their accounts with). Throws, naming what is missing.
 * The WhatsApp tests sign Meta's webhooks and try the handshake with `WHATSAPP_APP_SECRET` and
 * `WHATSAPP_VERIFY_TOKEN`, the names the server reads (a server on the embedded database keeps
 * the ones it made in `data/whatsapp-app-secret` and `data/whatsapp-verify-token`).
 */
export const fromEnv = (env: Readonly<Record<string, string | undefined>> = process.env): Target => {
  const baseUrl = env.LEADLINE_URL ?? env.LEADLINE_CONTRACT_URL
  const adminToken = env.LEADLINE_ADMIN_TOKEN
  const missing = [
    ...(baseUrl === undefined || baseUrl === "" ? ["LEADLINE_URL (the server's base URL)"] : []),
    ...(adminToken === undefined || adminToken === "" ? ["LEADLINE_ADMIN_TOKEN (its operator token)"] : [])
  ]
  if (missing.length > 0) throw new Error(`Set ${missing.join(" and ")} to test a running Leadline`)
  const optional = (value: string | undefined) => (value === undefined || value === "" ? undefined : value)
  return {
    baseUrl: baseUrl!.replace(/\/+$/, ""),
    adminToken: adminToken!,
    whatsappAppSecret: optional(env.WHATSAPP_APP_SECRET),
    whatsappVerifyToken: optional(env.WHATSAPP_VERIFY_TOKEN)
  }
}
