import { Cause, Effect, type Schema } from "effect"
import { HttpServerResponse, HttpServerRespondable } from "effect/http"
import { HttpApiError } from "effect/http-api"
import type * as Errors from "@leadline/core/Errors"
import { invalidInput, isDomainError, StoreUnavailable } from "@leadline/core/Errors"
import type { DomainError } from "@leadline/core/Errors"
import * as Wire from "./WireErrors.ts"

/**
 * The one place where failures become wire errors: domain errors, schema
 * failures, and whatever the HTTP stack raises on its own.
 */

export const UNAUTHORIZED_MESSAGE = "Invalid or missing API key"

/** The wire error each domain error becomes, so handlers keep precise error types. */
export type WireOf<E> = E extends Errors.Unauthenticated
  ? Wire.Unauthorized
  : E extends Errors.PermissionDenied
    ? Wire.Forbidden
    : E extends Errors.NotFound
      ? Wire.NotFound
      : E extends Errors.Conflict
        ? Wire.Conflict
        : E extends Errors.InvalidInput
          ? Wire.ValidationError
          : E extends Errors.IdempotencyInProgress
            ? Wire.IdempotencyInProgress
            : E extends Errors.IdempotencyKeyReused
              ? Wire.IdempotencyKeyReused
              : E extends Errors.WindowClosed
                ? Wire.WindowClosed
                : E extends Errors.LimitReached
                  ? Wire.MessageLimitReached
                  : E extends Errors.InvalidTransition
                    ? Wire.InvalidTransition
                    : E extends Errors.InsufficientStock
                      ? Wire.InsufficientStock
                      : E extends Errors.PreconditionFailed
                        ? Wire.PreconditionFailed
                        : E extends Errors.AiProviderError
                          ? Wire.AiProviderError
                          : E extends Errors.AiProviderTimeout
                            ? Wire.AiProviderTimeout
                            : never

export const fromDomain = <E extends DomainError>(error: E): WireOf<E> => map(error) as WireOf<E>

/** Runs a domain effect with its errors in wire form: what every handler returns. */
export const wire = <A, E extends DomainError, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, WireOf<E>, R> =>
  Effect.mapError(effect, fromDomain)

const map = (error: DomainError): Wire.WireError => {
  switch (error._tag) {
    case "Unauthenticated":
      return new Wire.Unauthorized({ error: UNAUTHORIZED_MESSAGE })
    case "PermissionDenied":
      return new Wire.Forbidden({ error: `Insufficient scope: requires ${error.required}` })
    case "NotFound":
      return new Wire.NotFound({ error: `No ${error.resource} with id ${error.id}` })
    case "Conflict":
      return new Wire.Conflict({ error: error.message })
    case "InvalidInput":
      return new Wire.ValidationError({ error: error.message, details: error.details })
    case "IdempotencyInProgress":
      return new Wire.IdempotencyInProgress({
        error: "A request with this Idempotency-Key is still in progress; retry shortly"
      })
    case "IdempotencyKeyReused":
      return new Wire.IdempotencyKeyReused({
        error: "This Idempotency-Key was already used with a different method, path or body"
      })
    case "WindowClosed":
      return new Wire.WindowClosed({
        error: "The customer has not written in the last 24 hours; send a template"
      })
    case "LimitReached":
      return new Wire.MessageLimitReached({
        error: `Monthly message limit reached: ${error.used} of ${error.limit} on plan ${error.plan}`
      })
    case "InvalidTransition":
      return new Wire.InvalidTransition({
        error: `Cannot change ${error.field} from ${error.from} to ${error.to}`,
        details: error.allowed.map((state) => ({ path: error.field, message: state }))
      })
    case "InsufficientStock":
      return new Wire.InsufficientStock({
        error: `Insufficient stock for ${error.sku}: ${error.requested} asked, ${error.available} left`
      })
    case "PreconditionFailed":
      return new Wire.PreconditionFailed({
        error: `If-Match does not match the current version (ETag "${error.current}")`
      })
    // The provider's own words stay in the log (they may echo the prompt): the caller gets a fixed text.
    case "AiProviderError":
      return new Wire.AiProviderError({ error: "The AI provider failed to answer" })
    case "AiProviderTimeout":
      return new Wire.AiProviderTimeout({ error: `The AI provider did not answer within ${error.timeoutMs} ms` })
  }
}

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

export const toResponse = (error: Wire.WireError): HttpServerResponse.HttpServerResponse => {
  const response = HttpServerResponse.jsonUnsafe(Wire.bodyOf(error), { status: Wire.statusOf(error) })
  switch (error._tag) {
    case "Unauthorized":
      return HttpServerResponse.setHeader(response, "www-authenticate", "Bearer")
    case "IdempotencyInProgress":
    case "ServiceUnavailable":
      return HttpServerResponse.setHeader(response, "retry-after", "1")
    default:
      return response
  }
}
