import type { Redacted } from "effect"
import { resolveSecret, secretFile } from "./SecretFile.ts"

export const fileIn = (dataDir: string) => secretFile(dataDir, "admin-token")

/**
 * The operator token: `LEADLINE_ADMIN_TOKEN` when set; otherwise the one kept in
 * the data directory, made on first start (mode 0600). Only the path is logged.
 */
export const resolveToken = (dataDir: string, fromEnv: Redacted.Redacted<string> | undefined) =>
  resolveSecret({ dataDir, name: "admin-token", envName: "LEADLINE_ADMIN_TOKEN", fromEnv, prefix: "lla_" })
