import type { Target } from "./TestServer.ts"

/**
 * A running Leadline to test, from the environment: `LEADLINE_URL` (its base URL;
 * `LEADLINE_CONTRACT_URL` is read too, the name earlier versions used) and `LEADLINE_ADMIN_TOKEN`
 * (the operator token the suites make their accounts with). Throws, naming what is missing.
 */
export const fromEnv = (env: Readonly<Record<string, string | undefined>> = process.env): Target => {
  const baseUrl = env.LEADLINE_URL ?? env.LEADLINE_CONTRACT_URL
  const adminToken = env.LEADLINE_ADMIN_TOKEN
  const missing = [
    ...(baseUrl === undefined || baseUrl === "" ? ["LEADLINE_URL (the server's base URL)"] : []),
    ...(adminToken === undefined || adminToken === "" ? ["LEADLINE_ADMIN_TOKEN (its operator token)"] : [])
  ]
  if (missing.length > 0) throw new Error(`Set ${missing.join(" and ")} to test a running Leadline`)
  return { baseUrl: baseUrl!.replace(/\/+$/, ""), adminToken: adminToken! }
}
