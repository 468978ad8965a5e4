import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Effect, Redacted } from "effect"

/** Where the data directory keeps the secret `name`. */
export const secretFile = (dataDir: string, name: string) => join(resolve(dataDir), name)

/**
 * A secret from the environment when set; otherwise the one kept in the data directory
 * under `name`, made on first start (mode 0600). Only the file's path is logged.
 */
export const resolveSecret = (options: {
  readonly dataDir: string
  readonly name: string
  readonly envName: string
  readonly fromEnv: Redacted.Redacted<string> | undefined
  readonly prefix?: string | undefined
}) =>
  Effect.gen(function* () {
    if (options.fromEnv !== undefined) return options.fromEnv
    const file = secretFile(options.dataDir, options.name)
    if (existsSync(file)) return Redacted.make(readFileSync(file, "utf8").trim())
    const secret = `${options.prefix ?? ""}${randomBytes(32).toString("base64url")}`
    mkdirSync(resolve(options.dataDir), { recursive: true })
    writeFileSync(file, `${secret}\n`, { mode: 0o600 })
    chmodSync(file, 0o600)
    yield* Effect.logInfo(`No ${options.envName} set: made one and saved it in ${file}`)
    return Redacted.make(secret)
  })
