import { createHash, timingSafeEqual } from "node:crypto"
import { Effect, Layer, Redacted } from "effect"
import { Unauthorized } from "../WireErrors.ts"
import { AdminAuthentication, AdminToken } from "./AdminAuthentication.ts"

// The server side of `AdminAuthentication` (the definition is shared with the browser client).

const digest = (value: string) => createHash("sha256").update(value).digest()

export const layer = Layer.effect(
  AdminAuthentication,
  Effect.gen(function* () {
    const expected = digest(Redacted.value(yield* AdminToken))
    const unauthorized = new Unauthorized({ error: "Invalid or missing admin token" })
    return AdminAuthentication.of({
      // Comparing fixed-length digests keeps the check constant-time whatever was sent.
      adminToken: (handler, { credential }) =>
        timingSafeEqual(digest(Redacted.value(credential)), expected) ? handler : Effect.fail(unauthorized)
    })
  })
)
