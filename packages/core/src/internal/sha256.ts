import { Effect } from "effect"
import * as Random from "./random.ts"

/** Hex SHA-256 of the UTF-8 text: Node's one-shot hash where there is one, else Web Crypto. */
export const hex = (text: string): Effect.Effect<string> => {
  const sync = Random.sha256HexSync
  return sync === undefined ? Effect.promise(() => Random.sha256Hex(text)) : Effect.sync(() => sync(text))
}
