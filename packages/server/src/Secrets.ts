import { Effect, Option, Redacted } from "effect"
import * as Keyring from "@leadline/sql-adapter/sealing/Keyring"
import * as SealedSecrets from "@leadline/sql-adapter/sealing/SealedSecrets"
import * as Database from "@leadline/sql-adapter/Database"
import { databaseConfig, ServerConfig } from "./Config.ts"

/**
 * The keyring of `LEADLINE_ENCRYPTION_KEY`, or undefined when it is unset (provider secrets are then
 * kept unsealed). A malformed one fails with a `KeyringError` naming the setting, never its bytes.
 */
export const keyring = (config: ServerConfig): Effect.Effect<Keyring.Keyring | undefined, Keyring.KeyringError> =>
  Option.match(config.encryptionKey, {
    onNone: () => Effect.succeed(undefined),
    onSome: (setting) =>
      Effect.try({
        try: () => Keyring.parse(Redacted.value(setting)),
        catch: (error) =>
          error instanceof Keyring.KeyringError ? error : new Keyring.KeyringError(`${Keyring.SETTING}: unreadable`)
      })
  })

/** A reseal has nothing to seal with. */
export class NoKeyring extends Error {
  override readonly name = "NoKeyring"
}

/**
 * Seals every provider secret under the keyring's first key (`leadline secrets reseal`), on the
 * configured database; servers may run meanwhile (on the embedded database they cannot: its files
 * belong to one process).
 */
export const reseal = Effect.gen(function* () {
  const config = yield* ServerConfig
  const ring = yield* keyring(config)
  if (ring === undefined) {
    return yield* Effect.fail(
      new NoKeyring(
        `${Keyring.SETTING} is not set: give the keyring to seal with (make a key with leadline secrets new-key)`
      )
    )
  }
  return yield* SealedSecrets.reseal(ring).pipe(Effect.provide(Database.client(databaseConfig(config))))
})
