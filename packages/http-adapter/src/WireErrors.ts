import type { Cause } from "effect"
import { Schema } from "effect"
import * as Errors from "@leadline/core/Errors"
import type { IssueDetail, Wire, WireDetails, WireId } from "@leadline/core/Errors"

/**
 * The error bodies of docs/contract.md: `{"error": <message>, "code": <code>}`, plus
 * `details` on validation errors. Each class is made from a `Wire` declaration: a domain
 * error's own (`of`) or, for what only the transport raises, one written here. The
 * `_tag` getter lets Effect tell the classes apart without putting a `_tag` on the wire.
 */

type DetailsOf<D extends WireDetails> = D extends "always"
  ? { readonly details: ReadonlyArray<IssueDetail> }
  : D extends "optional"
    ? { readonly details?: ReadonlyArray<IssueDetail> | undefined }
    : {}

/** A wire error as handlers fail with it. */
export type WireErrorOf<Name extends string, Code extends string, D extends WireDetails> = Cause.YieldableError & {
  readonly _tag: Name
  readonly error: string
  readonly code: Code
} & DetailsOf<D>

type DetailsFields<D extends WireDetails> = D extends "always"
  ? { readonly details: Schema.$Array<typeof Errors.IssueDetail> }
  : D extends "optional"
    ? { readonly details: Schema.optional<Schema.$Array<typeof Errors.IssueDetail>> }
    : {}

type BodyFields<Code extends string, D extends WireDetails> = {
  readonly error: Schema.String
  readonly code: Schema.tag<Code>
} & DetailsFields<D>

/** The class of one wire error: a schema for the endpoints and the client, and a constructor. */
export type WireClass<Name extends string, Code extends string, D extends WireDetails> = Schema.Class<
  WireErrorOf<Name, Code, D>,
  Schema.Struct<BodyFields<Code, D>>,
  Cause.YieldableError & { readonly _tag: Name }
>

/** The wire class a `Wire` declaration describes. */
export type ClassOf<W> = W extends Wire<infer N, infer C, infer D> ? WireClass<N, C, D> : never

/** The wire error a domain error becomes, so handlers keep precise error types. */
export type WireOf<E> = E extends { readonly [K in WireId]: Wire<infer N, infer C, infer D> }
  ? WireErrorOf<N, C, D>
  : never

const WireErrorId = Symbol.for("@leadline/http-adapter/WireErrors/WireError")

const classes = new Map<Wire, unknown>()

/** The wire class of a declaration, made once. */
export const fromWire = <W extends Wire>(wire: W): ClassOf<W> => {
  const known = classes.get(wire)
  if (known !== undefined) return known as ClassOf<W>
  const details = Schema.Array(Errors.IssueDetail)
  const detailsField =
    wire.details === "none"
      ? {}
      : {
          details:
            wire.details === "always"
              ? wire.detailsDescription === undefined
                ? details
                : details.annotate({ description: wire.detailsDescription })
              : Schema.optional(details)
        }
  const name = wire.name
  const made = class extends Schema.Error<unknown>(name)(
    { error: Schema.String, code: Schema.tag(wire.code), ...detailsField },
    { httpApiStatus: wire.status, description: wire.description }
  ) {
    get _tag() {
      return name
    }
  }
  Object.defineProperty(made.prototype, WireErrorId, { value: wire, enumerable: false })
  classes.set(wire, made)
  return made as unknown as ClassOf<W>
}

/** The wire class of a domain error class. */
export const of = <W extends Wire>(error: { readonly prototype: { readonly [K in WireId]: W } }): ClassOf<W> =>
  fromWire(Errors.wireOf(error))

export const ValidationError = of(Errors.InvalidInput)
export type ValidationError = InstanceType<typeof ValidationError>
export const Unauthorized = of(Errors.Unauthenticated)
export type Unauthorized = InstanceType<typeof Unauthorized>
export const Forbidden = of(Errors.PermissionDenied)
export type Forbidden = InstanceType<typeof Forbidden>
export const NotFound = of(Errors.NotFound)
export type NotFound = InstanceType<typeof NotFound>
export const Conflict = of(Errors.Conflict)
export type Conflict = InstanceType<typeof Conflict>
export const IdempotencyInProgress = of(Errors.IdempotencyInProgress)
export type IdempotencyInProgress = InstanceType<typeof IdempotencyInProgress>
export const IdempotencyKeyReused = of(Errors.IdempotencyKeyReused)
export type IdempotencyKeyReused = InstanceType<typeof IdempotencyKeyReused>
export const WindowClosed = of(Errors.WindowClosed)
export type WindowClosed = InstanceType<typeof WindowClosed>
export const MessageLimitReached = of(Errors.LimitReached)
export type MessageLimitReached = InstanceType<typeof MessageLimitReached>
export const InvalidTransition = of(Errors.InvalidTransition)
export type InvalidTransition = InstanceType<typeof InvalidTransition>
export const InsufficientStock = of(Errors.InsufficientStock)
export type InsufficientStock = InstanceType<typeof InsufficientStock>
export const PreconditionFailed = of(Errors.PreconditionFailed)
export type PreconditionFailed = InstanceType<typeof PreconditionFailed>
export const AiProviderError = of(Errors.AiProviderError)
export type AiProviderError = InstanceType<typeof AiProviderError>
export const AiProviderTimeout = of(Errors.AiProviderTimeout)
export type AiProviderTimeout = InstanceType<typeof AiProviderTimeout>
/** A MARKETING template to an opted-out lead (docs/contract-messaging.md §8.6). */
export const LeadOptedOut = of(Errors.LeadOptedOut)
export type LeadOptedOut = InstanceType<typeof LeadOptedOut>
/** Meta's Graph API refused or did not answer a call made for the caller (templates, read receipts). */
export const WhatsAppProviderError = of(Errors.WhatsAppProviderError)
export type WhatsAppProviderError = InstanceType<typeof WhatsAppProviderError>

/** A failure only the transport raises, declared here as a domain error would declare it. */
const transport = <const Name extends string, const Code extends string>(
  name: Name,
  code: Code,
  status: number,
  description: string,
  headers?: Readonly<Record<string, string>>
) =>
  fromWire<Wire<Name, Code, "none">>({
    name,
    code,
    status,
    description,
    details: "none",
    headers,
    body: () => ({ error: description })
  })

export const PayloadTooLarge = transport(
  "PayloadTooLarge",
  "payload_too_large",
  413,
  "The body is over the size limit."
)
export type PayloadTooLarge = InstanceType<typeof PayloadTooLarge>
export const UnsupportedMediaType = transport(
  "UnsupportedMediaType",
  "unsupported_media_type",
  415,
  "The body is not application/json."
)
export type UnsupportedMediaType = InstanceType<typeof UnsupportedMediaType>
export const RateLimited = transport("RateLimited", "rate_limited", 429, "Too many requests for this key.")
export type RateLimited = InstanceType<typeof RateLimited>
export const InternalError = transport(
  "InternalError",
  "internal_error",
  500,
  "Something unexpected failed; the log has details under the request id."
)
export type InternalError = InstanceType<typeof InternalError>
export const ServiceUnavailable = transport(
  "ServiceUnavailable",
  "service_unavailable",
  503,
  "The database is unreachable, or the request took longer than its time limit; retry after Retry-After.",
  { "retry-after": "1" }
)
export type ServiceUnavailable = InstanceType<typeof ServiceUnavailable>

/** Any wire error, of the classes above or of a resource's own domain error. */
export type WireError = WireErrorOf<string, string, WireDetails>

const wireOfInstance = (error: WireError): Wire => (error as unknown as Record<symbol, Wire>)[WireErrorId] as Wire

export const isWireError = (u: unknown): u is WireError => typeof u === "object" && u !== null && WireErrorId in u

export const statusOf = (error: WireError): number => wireOfInstance(error).status

/** The headers every answer with this error carries. */
export const headersOf = (error: WireError): Readonly<Record<string, string>> => wireOfInstance(error).headers ?? {}

/** The JSON body as it goes on the wire. */
export const bodyOf = (error: WireError): Record<string, unknown> => {
  const details = (error as { readonly details?: ReadonlyArray<IssueDetail> }).details
  return details === undefined
    ? { error: error.error, code: error.code }
    : { error: error.error, code: error.code, details }
}
