import { Schema } from "effect"

/**
 * The error bodies of docs/contract.md: `{"error": <message>, "code": <code>}`, plus
 * `details` on validation errors. The `_tag` getter lets Effect tell the classes
 * apart without putting a `_tag` on the wire.
 */

const Detail = Schema.Struct({ path: Schema.String, message: Schema.String })

export class ValidationError extends Schema.Error<ValidationError>("ValidationError")(
  {
    error: Schema.String,
    code: Schema.tag("validation_error"),
    details: Schema.optional(Schema.Array(Detail))
  },
  { httpApiStatus: 400, description: "The request is malformed: bad JSON, wrong types or values out of range." }
) {
  get _tag() {
    return "ValidationError" as const
  }
}

export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")(
  { error: Schema.String, code: Schema.tag("unauthorized") },
  { httpApiStatus: 401, description: "Missing, malformed, unknown or revoked credentials." }
) {
  get _tag() {
    return "Unauthorized" as const
  }
}

export class Forbidden extends Schema.Error<Forbidden>("Forbidden")(
  { error: Schema.String, code: Schema.tag("forbidden") },
  { httpApiStatus: 403, description: "The key lacks the scope the operation needs." }
) {
  get _tag() {
    return "Forbidden" as const
  }
}

export class NotFound extends Schema.Error<NotFound>("NotFound")(
  { error: Schema.String, code: Schema.tag("not_found") },
  { httpApiStatus: 404, description: "No such route, or no such resource in the caller's account." }
) {
  get _tag() {
    return "NotFound" as const
  }
}

export class Conflict extends Schema.Error<Conflict>("Conflict")(
  { error: Schema.String, code: Schema.tag("conflict") },
  { httpApiStatus: 409, description: "The write clashes with existing state." }
) {
  get _tag() {
    return "Conflict" as const
  }
}

export class IdempotencyInProgress extends Schema.Error<IdempotencyInProgress>("IdempotencyInProgress")(
  { error: Schema.String, code: Schema.tag("idempotency_in_progress") },
  { httpApiStatus: 409, description: "A request with the same Idempotency-Key is still executing; retry shortly." }
) {
  get _tag() {
    return "IdempotencyInProgress" as const
  }
}

export class WindowClosed extends Schema.Error<WindowClosed>("WindowClosed")(
  { error: Schema.String, code: Schema.tag("customer_service_window_closed") },
  {
    httpApiStatus: 409,
    description: "Free-form text to a lead who has not written in the last 24 hours: send a template."
  }
) {
  get _tag() {
    return "WindowClosed" as const
  }
}

export class MessageLimitReached extends Schema.Error<MessageLimitReached>("MessageLimitReached")(
  { error: Schema.String, code: Schema.tag("message_limit_reached") },
  { httpApiStatus: 402, description: "The plan's monthly message limit would be passed." }
) {
  get _tag() {
    return "MessageLimitReached" as const
  }
}

export class InvalidTransition extends Schema.Error<InvalidTransition>("InvalidTransition")(
  {
    error: Schema.String,
    code: Schema.tag("invalid_transition"),
    details: Schema.Array(Detail).annotate({
      description: "One entry per state the field may move to next (`message`); empty from a final state"
    })
  },
  {
    httpApiStatus: 409,
    description:
      "The status change is not allowed from the current state (`Cannot change status from delivered to pending`)."
  }
) {
  get _tag() {
    return "InvalidTransition" as const
  }
}

export class InsufficientStock extends Schema.Error<InsufficientStock>("InsufficientStock")(
  { error: Schema.String, code: Schema.tag("insufficient_stock") },
  {
    httpApiStatus: 409,
    description:
      "A line asks more than a tracked product has left; the message names the SKU and what is left. Nothing was written."
  }
) {
  get _tag() {
    return "InsufficientStock" as const
  }
}

export class PreconditionFailed extends Schema.Error<PreconditionFailed>("PreconditionFailed")(
  { error: Schema.String, code: Schema.tag("precondition_failed") },
  { httpApiStatus: 412, description: "`If-Match` does not match the current `ETag`; nothing changed." }
) {
  get _tag() {
    return "PreconditionFailed" as const
  }
}

export class AiProviderError extends Schema.Error<AiProviderError>("AiProviderError")(
  { error: Schema.String, code: Schema.tag("ai_provider_error") },
  {
    httpApiStatus: 502,
    description:
      "The configured model provider answered with an error or unusable output; the details are in the server's log."
  }
) {
  get _tag() {
    return "AiProviderError" as const
  }
}

export class AiProviderTimeout extends Schema.Error<AiProviderTimeout>("AiProviderTimeout")(
  { error: Schema.String, code: Schema.tag("ai_provider_timeout") },
  { httpApiStatus: 504, description: "The model provider did not answer within `LEADLINE_AI_TIMEOUT_MS`." }
) {
  get _tag() {
    return "AiProviderTimeout" as const
  }
}

export class PayloadTooLarge extends Schema.Error<PayloadTooLarge>("PayloadTooLarge")(
  { error: Schema.String, code: Schema.tag("payload_too_large") },
  { httpApiStatus: 413, description: "The body is over the size limit." }
) {
  get _tag() {
    return "PayloadTooLarge" as const
  }
}

export class UnsupportedMediaType extends Schema.Error<UnsupportedMediaType>("UnsupportedMediaType")(
  { error: Schema.String, code: Schema.tag("unsupported_media_type") },
  { httpApiStatus: 415, description: "The body is not application/json." }
) {
  get _tag() {
    return "UnsupportedMediaType" as const
  }
}

export class IdempotencyKeyReused extends Schema.Error<IdempotencyKeyReused>("IdempotencyKeyReused")(
  { error: Schema.String, code: Schema.tag("idempotency_key_reused") },
  { httpApiStatus: 422, description: "The Idempotency-Key was used for a different request." }
) {
  get _tag() {
    return "IdempotencyKeyReused" as const
  }
}

export class RateLimited extends Schema.Error<RateLimited>("RateLimited")(
  { error: Schema.String, code: Schema.tag("rate_limited") },
  { httpApiStatus: 429, description: "Too many requests for this key." }
) {
  get _tag() {
    return "RateLimited" as const
  }
}

export class InternalError extends Schema.Error<InternalError>("InternalError")(
  { error: Schema.String, code: Schema.tag("internal_error") },
  { httpApiStatus: 500, description: "Something unexpected failed; the log has details under the request id." }
) {
  get _tag() {
    return "InternalError" as const
  }
}

export class ServiceUnavailable extends Schema.Error<ServiceUnavailable>("ServiceUnavailable")(
  { error: Schema.String, code: Schema.tag("service_unavailable") },
  {
    httpApiStatus: 503,
    description: "The database is unreachable, or the request took longer than its time limit; retry after Retry-After."
  }
) {
  get _tag() {
    return "ServiceUnavailable" as const
  }
}

export type WireError =
  | ValidationError
  | Unauthorized
  | Forbidden
  | NotFound
  | Conflict
  | IdempotencyInProgress
  | WindowClosed
  | MessageLimitReached
  | InvalidTransition
  | InsufficientStock
  | PreconditionFailed
  | AiProviderError
  | AiProviderTimeout
  | PayloadTooLarge
  | UnsupportedMediaType
  | IdempotencyKeyReused
  | RateLimited
  | InternalError
  | ServiceUnavailable

const STATUS: Record<WireError["_tag"], number> = {
  ValidationError: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  IdempotencyInProgress: 409,
  WindowClosed: 409,
  MessageLimitReached: 402,
  InvalidTransition: 409,
  InsufficientStock: 409,
  PreconditionFailed: 412,
  AiProviderError: 502,
  AiProviderTimeout: 504,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  IdempotencyKeyReused: 422,
  RateLimited: 429,
  InternalError: 500,
  ServiceUnavailable: 503
}

export const statusOf = (error: WireError): number => STATUS[error._tag]

const TAGS = new Set(Object.keys(STATUS))
export const isWireError = (u: unknown): u is WireError =>
  typeof u === "object" && u !== null && "_tag" in u && TAGS.has((u as { _tag: string })._tag) && "code" in u

/** The JSON body as it goes on the wire. */
export const bodyOf = (error: WireError): Record<string, unknown> =>
  (error._tag === "ValidationError" || error._tag === "InvalidTransition") && error.details !== undefined
    ? { error: error.error, code: error.code, details: error.details }
    : { error: error.error, code: error.code }
