import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Effect, Redacted } from "effect"

export const fileIn = (dataDir: string) => join(resolve(dataDir), "admin-token")

/**
 * The operator token: `LEADLINE_ADMIN_TOKEN` when set; otherwise the one kept in
 * the data directory, made on first start (mode 0600). Only the path is logged.
 */
export const resolveToken = (dataDir: string, fromEnv: Redacted.Redacted<string> | undefined) =>
  Effect.gen(function* () {
    if (fromEnv !== undefined) return fromEnv
    const file = fileIn(dataDir)
    if (existsSync(file)) return Redacted.make(readFileSync(file, "utf8").trim())
    const token = `lla_${randomBytes(32).toString("base64url")}`
    mkdirSync(resolve(dataDir), { recursive: true })
    writeFileSync(file, `${token}\n`, { mode: 0o600 })
    chmodSync(file, 0o600)
    yield* Effect.logInfo(`No LEADLINE_ADMIN_TOKEN set: made an operator token and saved it in ${file}`)
    return Redacted.make(token)
  })
