import { Cause, Effect, type Schema } from "effect"
import { HttpServerResponse, HttpServerRespondable } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { type DomainError, invalidInput, isDomainError, StoreUnavailable, WireId } from "@leadline/core/Errors"
import * as Wire from "./WireErrors.ts"

/**
 * The one place where failures become wire errors: domain errors, schema
 * failures, and whatever the HTTP stack raises on its own.
 */

/** The wire error each domain error becomes, so handlers keep precise error types. */
export type WireOf<E> = Wire.WireOf<E>

/** A domain error in wire form, as its own declaration says (core `Errors.ts`: `DomainError`). */
export const fromDomain = <E extends DomainError>(error: E): WireOf<E> => {
  const declared = error[WireId]
  const WireClass = Wire.fromWire(declared) as unknown as new (body: object) => WireOf<E>
  return new WireClass(declared.body(error as never))
}

/** Runs a domain effect with its errors in wire form: what every handler returns. */
export const wire = <A, E extends DomainError, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, WireOf<E>, R> =>
  Effect.mapError(effect, fromDomain)

const KIND_LABEL: Record<HttpApiError.HttpApiSchemaError["kind"], string> = {
  Params: "path",
  Headers: "headers",
  Query: "query",
  Body: "body",
  Payload: "body",
  ResponseHeaders: "headers"
}

export const fromSchemaError = (error: Schema.SchemaError, where: string): Wire.ValidationError => {
  const invalid = invalidInput(error, `request ${where}`)
  return new Wire.ValidationError({ error: invalid.message, details: invalid.details })
}

export const fromHttpApiSchemaError = (error: HttpApiError.HttpApiSchemaError) =>
  fromSchemaError(error.cause, KIND_LABEL[error.kind])

const fromStatus = (status: number): Wire.WireError => {
  switch (status) {
    case 400:
      return new Wire.ValidationError({ error: "The request could not be read" })
    case 404:
      return new Wire.NotFound({ error: "No such route" })
    case 413:
      return new Wire.PayloadTooLarge({ error: "The request body is too large" })
    case 415:
      return new Wire.UnsupportedMediaType({ error: "The request body must be application/json" })
    default:
      return new Wire.InternalError({ error: "Internal server error" })
  }
}

/** Any failure or defect value as a wire error; `expected` is false for what belongs in the error log. */
export const fromUnknown = (
  u: unknown
): Effect.Effect<{ readonly error: Wire.WireError; readonly expected: boolean }> => {
  if (Wire.isWireError(u)) return Effect.succeed({ error: u, expected: Wire.statusOf(u) < 500 })
  if (isDomainError(u)) return Effect.succeed({ error: fromDomain(u), expected: true })
  if (u instanceof StoreUnavailable) {
    return Effect.succeed({
      error: new Wire.ServiceUnavailable({ error: "The database is unreachable; retry shortly" }),
      // The SQL adapter logs an outage once, when it starts and ends, not once per request.
      expected: true
    })
  }
  if (HttpApiError.HttpApiSchemaError.is(u) && u.kind !== "Body" && u.kind !== "ResponseHeaders") {
    return Effect.succeed({ error: fromHttpApiSchemaError(u), expected: true })
  }
  if (HttpServerRespondable.isRespondable(u)) {
    return Effect.map(HttpServerRespondable.toResponse(u), (response) => {
      const error = fromStatus(response.status)
      return { error, expected: Wire.statusOf(error) < 500 }
    })
  }
  return Effect.succeed({ error: fromStatus(500), expected: false })
}

export const fromCause = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.findErrorOption(cause)
  if (failure._tag === "Some") return fromUnknown(failure.value)
  const defect = Cause.findDefect(cause)
  return fromUnknown(defect._tag === "Success" ? defect.success : undefined)
}

/**
 * The answer to a request another transport's route refuses before the API sees it (the
 * WhatsApp webhook's body shape, signature, handshake token and body limit), in the API's error format.
 */
export const rejection = (refused: {
  readonly status: 400 | 401 | 403 | 413
  readonly message: string
}): HttpServerResponse.HttpServerResponse => {
  switch (refused.status) {
    case 400:
      return toResponse(new Wire.ValidationError({ error: refused.message }))
    case 401:
      return toResponse(new Wire.Unauthorized({ error: refused.message }))
    case 403:
      return toResponse(new Wire.Forbidden({ error: refused.message }))
    case 413:
      // Closing the connection spares reading a body we will not use.
      return HttpServerResponse.setHeader(
        toResponse(new Wire.PayloadTooLarge({ error: refused.message })),
        "connection",
        "close"
      )
  }
}

export const toResponse = (error: Wire.WireError): HttpServerResponse.HttpServerResponse => {
  const response = HttpServerResponse.jsonUnsafe(Wire.bodyOf(error), { status: Wire.statusOf(error) })
  const headers = Wire.headersOf(error)
  return Object.keys(headers).length === 0 ? response : HttpServerResponse.setHeaders(response, headers)
}
