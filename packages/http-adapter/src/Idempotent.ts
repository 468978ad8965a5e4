import { Context, Schema } from "effect"
import { HttpApiEndpoint, HttpApiMiddleware, HttpApiSchema } from "effect/http-api"
import type { HttpRouter } from "effect/http"
import type { CurrentPrincipal } from "@leadline/core/auth/Principal"
import { IdempotencyKey } from "@leadline/core/idempotency/Idempotency"
import { IdempotencyInProgress, IdempotencyKeyReused, ValidationError } from "./WireErrors.ts"

/**
 * Applies the core idempotency rules to an endpoint: the request is fingerprinted
 * (method, path, body), the response it produced is kept per account and key,
 * and a retry gets that response back with `Idempotent-Replayed: true`.
 */
export class Idempotent extends HttpApiMiddleware.Service<Idempotent, { requires: CurrentPrincipal }>()(
  "leadline/Idempotent",
  { error: [ValidationError, IdempotencyInProgress, IdempotencyKeyReused] }
) {}

export const HEADER = "idempotency-key"

/**
 * Top-level fields of an endpoint's answer that its idempotency record does not keep: the
 * first answer carries them, the record and so every replay has them `null`. For a secret
 * that is shown once and stored only as a hash (an API key), which a stored answer would
 * otherwise keep in clear for 24 hours. Declared with `create`'s `withheld`.
 */
export class Withheld extends Context.Reference<ReadonlyArray<string>>("leadline/Idempotent/Withheld", {
  defaultValue: () => []
}) {}

export const IdempotencyHeaders = { [HEADER]: Schema.optional(IdempotencyKey) }

/**
 * A create endpoint: `POST`, 201 on success, and idempotent by declaration.
 * Every create in the API is declared through this, so each one gets the
 * `Idempotency-Key` header, its errors and its behaviour without repeating them.
 */
export const create = <
  const Name extends string,
  const Path extends HttpRouter.PathInput,
  Payload extends Schema.Top,
  Success extends Schema.Top,
  const Error extends ReadonlyArray<Schema.Top>,
  Params extends Schema.Struct.Fields = never
>(
  name: Name,
  path: Path,
  options: {
    readonly params?: Params | undefined
    readonly payload: Payload
    readonly success: Success
    readonly error: Error
    /** Fields of the answer its replays show as `null` (`Withheld`); the schema must allow null there. */
    readonly withheld?: ReadonlyArray<keyof Success["Type"] & string> | undefined
  }
) => {
  const endpoint = HttpApiEndpoint.post<
    Name,
    Path,
    Params,
    never,
    Payload,
    typeof IdempotencyHeaders,
    Success["Rebuild"],
    Error
  >(name, path, {
    ...(options.params === undefined ? {} : { params: options.params }),
    payload: options.payload,
    success: options.success.pipe(HttpApiSchema.status(201)),
    headers: IdempotencyHeaders,
    // Error schemas of creates are plain JSON errors, never streams: the check the
    // constructor runs on a concrete type cannot be stated for a type parameter.
    error: options.error as never
  }).middleware(Idempotent)
  return options.withheld === undefined ? endpoint : endpoint.annotate(Withheld, options.withheld)
}

/**
 * An action on one thing (`POST …/queue`, `POST …/cancel`): 200 with the thing, no body, and
 * `Idempotency-Key` accepted as on a create, so a retried action answers as the first did.
 */
export const action = <
  const Name extends string,
  const Path extends HttpRouter.PathInput,
  Success extends Schema.Top,
  const Error extends ReadonlyArray<Schema.Top>,
  Params extends Schema.Struct.Fields
>(
  name: Name,
  path: Path,
  options: { readonly params: Params; readonly success: Success; readonly error: Error }
) =>
  HttpApiEndpoint.post<Name, Path, Params, never, never, typeof IdempotencyHeaders, Success, Error>(name, path, {
    params: options.params,
    success: options.success,
    headers: IdempotencyHeaders,
    error: options.error as never
  }).middleware(Idempotent)
