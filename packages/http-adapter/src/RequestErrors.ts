import { Effect } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import { fromHttpApiSchemaError } from "./ErrorMapping.ts"
import {
  InternalError,
  PayloadTooLarge,
  ServiceUnavailable,
  UnsupportedMediaType,
  ValidationError
} from "./WireErrors.ts"

/**
 * Declares the errors any route can answer with, so the OpenAPI document and the
 * typed client know them, and turns request decoding failures into 400 bodies.
 * 503 is any route's too: the database away, or a request over its time limit.
 */
export class RequestErrors extends HttpApiMiddleware.Service<RequestErrors>()("leadline/RequestErrors", {
  error: [ValidationError, PayloadTooLarge, UnsupportedMediaType, InternalError, ServiceUnavailable]
}) {}

export const layer = HttpApiMiddleware.layerSchemaErrorTransform(RequestErrors, (error) =>
  // A response that fails to encode is our bug, not the caller's: leave it a 500.
  error.kind === "Body" || error.kind === "ResponseHeaders"
    ? Effect.fail(error)
    : Effect.fail(fromHttpApiSchemaError(error))
)
