import { createHash } from "node:crypto"
import { Context, Effect, Layer, Schema } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Idempotency, IdempotencyKey } from "@leadline/core/idempotency/Idempotency"
import type { StoredResponse } from "@leadline/core/idempotency/IdempotencyStore"
import { fromDomain, fromUnknown, toResponse } from "./ErrorMapping.ts"
import { HEADER, Idempotent, Withheld } from "./Idempotent.ts"
import { InsufficientStock, ValidationError } from "./WireErrors.ts"

// The server side of `Idempotent` (kept apart from the definition, which the browser client loads too).

const isValidKey = Schema.is(IdempotencyKey)
const invalidKey = new ValidationError({
  error: "Idempotency-Key must be 1 to 200 printable ASCII characters",
  details: [{ path: "Idempotency-Key", message: "must be 1 to 200 printable ASCII characters" }]
})

/**
 * Whether a refusal is kept as the key's answer. A refusal for want of stock is not (as Stripe
 * keeps no result for a request that conflicted with the state of things): its transaction rolls
 * back whatever the operation wrote before the stock ran out, and a retry with the same key tries
 * again, and may succeed once stock is back.
 */
const isKept = (error: unknown): boolean => !(error instanceof InsufficientStock)

const fingerprintOf = (method: string, url: string, body: string) =>
  createHash("sha256").update(`${method} ${url}\n`).update(body).digest("hex")

const decoder = new TextDecoder()

const bodyText = (response: HttpServerResponse.HttpServerResponse): string => {
  const body = response.body
  switch (body._tag) {
    case "Uint8Array":
      return decoder.decode(body.body)
    case "Raw":
      return typeof body.body === "string" ? body.body : JSON.stringify(body.body)
    default:
      return ""
  }
}

/**
 * The body with the `withheld` fields set to null, when it is a JSON object that has them.
 * A body that cannot be read throws (a defect: the key is released and nothing is kept),
 * so that a secret is never stored because its answer was not the JSON expected.
 */
const withhold = (body: string, withheld: ReadonlyArray<string>): string => {
  if (withheld.length === 0) return body
  const parsed: unknown = JSON.parse(body)
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return body
  const record = parsed as Record<string, unknown>
  if (!withheld.some((field) => Object.hasOwn(record, field))) return body
  return JSON.stringify(
    Object.fromEntries(Object.entries(record).map(([field, value]) => [field, withheld.includes(field) ? null : value]))
  )
}

const store = (response: HttpServerResponse.HttpServerResponse, withheld: ReadonlyArray<string>): StoredResponse => {
  const etag = response.headers.etag
  return {
    status: response.status,
    contentType: ("contentType" in response.body ? response.body.contentType : undefined) ?? "application/json",
    body: withhold(bodyText(response), withheld),
    ...(etag === undefined ? {} : { etag })
  }
}

const replay = (stored: StoredResponse) =>
  HttpServerResponse.text(stored.body, {
    status: stored.status,
    contentType: stored.contentType,
    headers: {
      "idempotent-replayed": "true",
      ...(stored.etag === undefined ? {} : { etag: stored.etag })
    }
  })

export const layer = Layer.effect(
  Idempotent,
  Effect.gen(function* () {
    const idempotency = yield* Idempotency
    return Idempotent.of((handler, { endpoint }) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const key = request.headers[HEADER]
        if (key === undefined) return yield* handler
        if (!isValidKey(key)) return toResponse(invalidKey)
        const body = yield* Effect.orDie(request.text)
        const withheld = Context.get(endpoint.annotations, Withheld)
        let original: HttpServerResponse.HttpServerResponse | undefined
        // Typed failures become their wire response here, so that they are stored
        // too, except the ones not kept (`isKept`): those, and defects, propagate,
        // roll the transaction back and release the key.
        const operation = Effect.catchIf(handler, isKept, (error) =>
          Effect.map(fromUnknown(error), ({ error }) => toResponse(error))
        ).pipe(
          Effect.map((response) => {
            original = response
            return store(response, withheld)
          })
        )
        return yield* idempotency.execute(key, fingerprintOf(request.method, request.url, body), operation).pipe(
          Effect.map((outcome) => (outcome.replayed || original === undefined ? replay(outcome.response) : original)),
          Effect.catchTags({
            IdempotencyInProgress: (e) => Effect.succeed(toResponse(fromDomain(e))),
            IdempotencyKeyReused: (e) => Effect.succeed(toResponse(fromDomain(e)))
          }),
          Effect.catch((error) => Effect.map(fromUnknown(error), ({ error }) => toResponse(error)))
        )
      })
    )
  })
)
