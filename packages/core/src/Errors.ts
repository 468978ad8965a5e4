import { Effect, Schema, SchemaIssue } from "effect"

/**
 * Domain errors, each declared once with what a caller sees of it: its HTTP status, its
 * wire `code`, the OpenAPI description and the message (`DomainError` below). The
 * http-adapter derives its wire classes, the mapping and the OpenAPI responses from that
 * declaration alone, so an error is added in one file: here for the contract's shared
 * errors, or in the folder of the resource it belongs to.
 */

export const IssueDetail = Schema.Struct({ path: Schema.String, message: Schema.String })
export type IssueDetail = typeof IssueDetail.Type

/** Whether the wire body carries `details`: never, always, or only when there are some. */
export type WireDetails = "none" | "always" | "optional"

/** What a caller sees of a domain error, as the transport reads it off the error. */
export interface Wire<
  Name extends string = string,
  Code extends string = string,
  Details extends WireDetails = WireDetails
> {
  /** The wire error's name: its class in the typed client and its schema in the OpenAPI document. */
  readonly name: Name
  readonly code: Code
  readonly status: number
  readonly description: string
  readonly details: Details
  /** What the `details` entries mean, for the OpenAPI document. */
  readonly detailsDescription?: string | undefined
  /** Headers every answer with this error carries (`Retry-After`, `WWW-Authenticate`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** The wire body's `error` text and `details`, from the domain error's fields. */
  readonly body: (error: never) => { readonly error: string; readonly details?: ReadonlyArray<IssueDetail> }
}

/** The key under which a domain error's prototype holds its `Wire`. */
export const WireId: unique symbol = Symbol.for("@leadline/core/Errors/Wire")
export type WireId = typeof WireId

/** What an error declares: the status, code, description and message; `name` defaults to the tag. */
export interface WireDeclaration<Fields, Name extends string, Code extends string, Details extends WireDetails> {
  readonly name?: Name
  readonly status: number
  readonly code: Code
  readonly description: string
  /** The `error` text. It must not leak what the caller may not see (a provider's reply, say). */
  readonly message: (error: Fields) => string
  readonly details?: {
    readonly of: (error: Fields) => ReadonlyArray<IssueDetail>
    readonly description?: string
    /** `optional` when the same wire error also leaves the transport without details. */
    readonly presence?: Exclude<Details, "none">
  }
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * A tagged, schema-backed error class that also says how it goes on the wire:
 *
 *     export class OutOfStock extends DomainError<OutOfStock>()("OutOfStock", { sku: Schema.String }, {
 *       status: 409, code: "out_of_stock", description: "…", message: ({ sku }) => `${sku} is sold out`
 *     }) {}
 *
 * The declaration is kept on the class's prototype under `WireId`, so any instance can be
 * mapped without a table listing every error.
 */
export const DomainError =
  <Self>() =>
  <
    const Tag extends string,
    const Fields extends Schema.Struct.Fields,
    const Code extends string,
    const Name extends string = Tag,
    const Details extends WireDetails = "none"
  >(
    tag: Tag,
    fields: Fields,
    declaration: WireDeclaration<Schema.Struct.Type<Fields>, Name, Code, Details>
  ) => {
    const details = declaration.details
    const wire: Wire<Name, Code, Details> = {
      name: (declaration.name ?? tag) as Name,
      code: declaration.code,
      status: declaration.status,
      description: declaration.description,
      details: (details === undefined ? "none" : (details.presence ?? "always")) as Details,
      detailsDescription: details?.description,
      headers: declaration.headers,
      body: ((error: Schema.Struct.Type<Fields>) =>
        details === undefined
          ? { error: declaration.message(error) }
          : { error: declaration.message(error), details: details.of(error) }) as Wire["body"]
    }
    const Base = Schema.TaggedError<Self, { readonly [WireId]: Wire<Name, Code, Details> }>()(tag, fields)
    Object.defineProperty((Base as unknown as { readonly prototype: object }).prototype, WireId, {
      value: wire,
      enumerable: false
    })
    return Base
  }

/** Any domain error, the contract's shared ones below and each resource's own: whatever carries a `Wire`. */
export interface DomainError {
  readonly _tag: string
  readonly [WireId]: Wire
}

/** Whether a failure is a domain error (by its declaration, not by tag: wire errors reuse some tags). */
export const isDomainError = (u: unknown): u is DomainError => typeof u === "object" && u !== null && WireId in u

/** The wire declaration of a domain error class, read without making an instance. */
export const wireOf = <W extends Wire>(error: { readonly prototype: { readonly [WireId]: W } }): W =>
  error.prototype[WireId]

export class Unauthenticated extends DomainError<Unauthenticated>()(
  "Unauthenticated",
  { reason: Schema.Literals(["missing", "malformed", "unknown", "revoked"]) },
  {
    name: "Unauthorized",
    status: 401,
    code: "unauthorized",
    description: "Missing, malformed, unknown or revoked credentials.",
    // One text for every reason: telling them apart would help someone guessing keys.
    message: () => "Invalid or missing API key",
    headers: { "www-authenticate": "Bearer" }
  }
) {}

/** The principal lacks a permission; `required` is the scope that would grant it, or "full access". */
export class PermissionDenied extends DomainError<PermissionDenied>()(
  "PermissionDenied",
  { required: Schema.String },
  {
    name: "Forbidden",
    status: 403,
    code: "forbidden",
    description: "The key lacks the scope the operation needs.",
    message: ({ required }) => `Insufficient scope: requires ${required}`
  }
) {}

export class NotFound extends DomainError<NotFound>()(
  "NotFound",
  { resource: Schema.String, id: Schema.String },
  {
    status: 404,
    code: "not_found",
    description: "No such route, or no such resource in the caller's account.",
    message: ({ resource, id }) => `No ${resource} with id ${id}`
  }
) {}

export class Conflict extends DomainError<Conflict>()(
  "Conflict",
  { message: Schema.String },
  {
    status: 409,
    code: "conflict",
    description: "The write clashes with existing state.",
    message: ({ message }) => message
  }
) {}

/** Input that passed the schema but breaks a rule that needs state (an unknown user id, say). */
export class InvalidInput extends DomainError<InvalidInput>()(
  "InvalidInput",
  { message: Schema.String, details: Schema.Array(IssueDetail) },
  {
    name: "ValidationError",
    status: 400,
    code: "validation_error",
    description: "The request is malformed: bad JSON, wrong types or values out of range.",
    message: ({ message }) => message,
    // A body the server could not read at all has no field to name.
    details: { of: ({ details }) => details, presence: "optional" }
  }
) {}

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** The failed checks of a schema, one `{path, message}` each, paths dotted. */
export const issueDetails = (error: Schema.SchemaError): ReadonlyArray<IssueDetail> =>
  formatIssues(error.issue).issues.map((issue) => ({
    path: (issue.path ?? []).map((segment) => String(typeof segment === "object" ? segment.key : segment)).join("."),
    message: issue.message
  }))

/** A one-line summary led by the first failed check, then every check in `details`. */
export const invalidInput = (error: Schema.SchemaError, what: string): InvalidInput => {
  const details = issueDetails(error)
  const first = details[0]
  const summary =
    first === undefined ? "" : first.path === "" ? `: ${first.message}` : `: ${first.path}: ${first.message}`
  return new InvalidInput({ message: `Invalid ${what}${summary}`, details })
}

/** A field a service refuses after decoding: a reference to nothing, a rule across fields. */
export const invalidField = (
  path: string,
  message: string,
  where: "body" | "query" | "headers" = "body"
): InvalidInput =>
  new InvalidInput({ message: `Invalid request ${where}: ${path}: ${message}`, details: [{ path, message }] })

/** `assigned_user_id` naming no user of the caller's account (leads, conversations). */
export const unknownAssignee = (): InvalidInput =>
  new InvalidInput({
    message: "assigned_user_id is not a user of this account",
    details: [{ path: "assigned_user_id", message: "no such user in this account" }]
  })

/**
 * Decodes a service's input itself, so that an app embedding the core gets the
 * same rules (a normalised phone, field limits) as a call through HTTP, where the
 * payload was decoded already and decoding again changes nothing.
 */
export const decodeInput =
  <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, what: string) =>
  (input: unknown): Effect.Effect<S["Type"], InvalidInput> =>
    Effect.mapError(Schema.decodeUnknownEffect(schema)(input), (error) => invalidInput(error, what))

/** Free-form text to a lead who has not written in the last 24 hours (docs/contract-messaging.md §5.2). */
export class WindowClosed extends DomainError<WindowClosed>()(
  "WindowClosed",
  {},
  {
    status: 409,
    code: "customer_service_window_closed",
    description: "Free-form text to a lead who has not written in the last 24 hours: send a template.",
    message: () => "The customer has not written in the last 24 hours; send a template"
  }
) {}

/** The plan's monthly message limit would be passed (docs/contract-messaging.md §10). */
export class LimitReached extends DomainError<LimitReached>()(
  "LimitReached",
  { used: Schema.Number, limit: Schema.Number, plan: Schema.String },
  {
    name: "MessageLimitReached",
    status: 402,
    code: "message_limit_reached",
    description: "The plan's monthly message limit would be passed.",
    message: ({ used, limit, plan }) => `Monthly message limit reached: ${used} of ${limit} on plan ${plan}`
  }
) {}

/** A status move its machine does not allow (docs/contract-commerce-ai.md §3): `allowed` are the moves it does. */
export class InvalidTransition extends DomainError<InvalidTransition>()(
  "InvalidTransition",
  { field: Schema.String, from: Schema.String, to: Schema.String, allowed: Schema.Array(Schema.String) },
  {
    status: 409,
    code: "invalid_transition",
    description:
      "The status change is not allowed from the current state (`Cannot change status from delivered to pending`).",
    message: ({ field, from, to }) => `Cannot change ${field} from ${from} to ${to}`,
    details: {
      of: ({ field, allowed }) => allowed.map((state) => ({ path: field, message: state })),
      description: "One entry per state the field may move to next (`message`); empty from a final state"
    }
  }
) {}

/** An order line asks more than a tracked product has; nothing was taken. */
export class InsufficientStock extends DomainError<InsufficientStock>()(
  "InsufficientStock",
  { sku: Schema.String, available: Schema.Number, requested: Schema.Number },
  {
    status: 409,
    code: "insufficient_stock",
    description:
      "A line asks more than a tracked product has left; the message names the SKU and what is left. Nothing was written.",
    message: ({ sku, requested, available }) => `Insufficient stock for ${sku}: ${requested} asked, ${available} left`
  }
) {}

/** `If-Match` names a version the resource no longer has (RFC 9110 §13.1.1); nothing changed. */
export class PreconditionFailed extends DomainError<PreconditionFailed>()(
  "PreconditionFailed",
  { current: Schema.Number },
  {
    status: 412,
    code: "precondition_failed",
    description: "`If-Match` does not match the current `ETag`; nothing changed.",
    message: ({ current }) => `If-Match does not match the current version (ETag "${current}")`
  }
) {}

/**
 * The language-model provider answered with an error or with output that cannot be used
 * (docs/contract-commerce-ai.md §1: 502 `ai_provider_error`). `message` is for the log, never the wire:
 * a provider's body may echo the prompt or the key.
 */
export class AiProviderError extends DomainError<AiProviderError>()(
  "AiProviderError",
  { message: Schema.String },
  {
    status: 502,
    code: "ai_provider_error",
    description:
      "The configured model provider answered with an error or unusable output; the details are in the server's log.",
    message: () => "The AI provider failed to answer"
  }
) {}

/** The provider did not answer within the configured time (504 `ai_provider_timeout`). */
export class AiProviderTimeout extends DomainError<AiProviderTimeout>()(
  "AiProviderTimeout",
  { timeoutMs: Schema.Number },
  {
    status: 504,
    code: "ai_provider_timeout",
    description: "The model provider did not answer within `LEADLINE_AI_TIMEOUT_MS`.",
    message: ({ timeoutMs }) => `The AI provider did not answer within ${timeoutMs} ms`
  }
) {}

export class IdempotencyInProgress extends DomainError<IdempotencyInProgress>()(
  "IdempotencyInProgress",
  {},
  {
    status: 409,
    code: "idempotency_in_progress",
    description: "A request with the same Idempotency-Key is still executing; retry shortly.",
    message: () => "A request with this Idempotency-Key is still in progress; retry shortly",
    headers: { "retry-after": "1" }
  }
) {}

export class IdempotencyKeyReused extends DomainError<IdempotencyKeyReused>()(
  "IdempotencyKeyReused",
  {},
  {
    status: 422,
    code: "idempotency_key_reused",
    description: "The Idempotency-Key was used for a different request.",
    message: () => "This Idempotency-Key was already used with a different method, path or body"
  }
) {}

// WhatsApp (docs/contract-messaging.md): the errors of its files, read receipts, templates and opt-outs.

/** The message has a file, but its bytes are not kept (yet, or ever): docs/contract-messaging.md §5.8. */
export class MediaNotStored extends DomainError<MediaNotStored>()(
  "MediaNotStored",
  { id: Schema.String, state: Schema.Literals(["pending", "failed"]), reason: Schema.NullOr(Schema.String) },
  {
    status: 409,
    code: "media_not_stored",
    description: "The message's file is still being fetched from WhatsApp (pending), or could not be kept (failed).",
    message: ({ id, state, reason }) =>
      state === "pending"
        ? `The file of message ${id} is still being fetched; try again shortly`
        : `The file of message ${id} could not be kept (${reason ?? "failed"})`,
    details: {
      of: ({ state, reason }) => [{ path: "media.state", message: reason === null ? state : `${state}: ${reason}` }],
      description: "The media's state, and the reason when it failed"
    }
  }
) {}

/**
 * An upload over the limit of its type (docs/contract-messaging.md §5.9): the body was read no
 * further and nothing was kept. The status and code of any body over a limit (docs/contract.md).
 */
export class MediaTooLarge extends DomainError<MediaTooLarge>()(
  "MediaTooLarge",
  { type: Schema.NullOr(Schema.String), limit: Schema.Number },
  {
    status: 413,
    code: "payload_too_large",
    description:
      "The uploaded file is over the limit of its type (image 5 MiB, audio and video 16 MiB, document 100 MiB, unless the server sets others); nothing was kept.",
    message: ({ type, limit }) => `The file is over the limit of ${limitText(type, limit)}`,
    details: {
      of: ({ type, limit }) => [{ path: "file", message: `at most ${limitText(type, limit)}` }],
      description: "Names the file part and its limit"
    }
  }
) {}

const limitText = (type: string | null, limit: number) =>
  type === null ? `${limit} bytes` : `${limit} bytes for ${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`

/** A MARKETING template sent through the API to a lead that opted out (docs/contract-messaging.md §8.6). */
export class LeadOptedOut extends DomainError<LeadOptedOut>()(
  "LeadOptedOut",
  { leadId: Schema.String, template: Schema.String },
  {
    status: 409,
    code: "lead_opted_out",
    description:
      "A MARKETING template to a lead whose marketing_opt_out is set; utility and authentication templates and replies in the window still go. Nothing was queued.",
    message: ({ leadId, template }) => `Lead ${leadId} opted out of marketing: ${template} is a MARKETING template`
  }
) {}

/**
 * Meta's Graph API refused a call Leadline made for the caller (a template's create, delete or
 * sync, a read receipt), or did not answer: nothing changed in Leadline, and the call may be made
 * again. The message is Graph's own: it names Meta's rules, never the token or the caller's data.
 */
export class WhatsAppProviderError extends DomainError<WhatsAppProviderError>()(
  "WhatsAppProviderError",
  { message: Schema.String, providerCode: Schema.NullOr(Schema.Number) },
  {
    status: 502,
    code: "whatsapp_provider_error",
    description:
      "Meta's Graph API failed, refused the request or did not answer; the message is Graph's own (it names what Meta objects to). Nothing changed in Leadline, and the request may be repeated.",
    message: ({ message, providerCode }) =>
      providerCode === null ? `WhatsApp: ${message}` : `WhatsApp (Graph error ${providerCode}): ${message}`
  }
) {}

/**
 * A store could not be reached (the database is down or the network to it is
 * cut). Adapters raise it as a defect; the transport answers 503 and the
 * caller may retry. Not a domain error: nothing the caller did caused it.
 */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  message: Schema.String
}) {}
