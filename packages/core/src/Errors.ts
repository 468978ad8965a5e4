import { Effect, Schema, SchemaIssue } from "effect"

/**
 * Domain errors. They carry no HTTP status: the http-adapter maps them to the
 * wire body in one place (`ErrorMapping.ts`).
 */

export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  reason: Schema.Literals(["missing", "malformed", "unknown", "revoked"])
}) {}

/** The principal lacks a permission; `required` is the scope that would grant it, or "full access". */
export class PermissionDenied extends Schema.TaggedError<PermissionDenied>()("PermissionDenied", {
  required: Schema.String
}) {}

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  resource: Schema.String,
  id: Schema.String
}) {}

export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String
}) {}

export const IssueDetail = Schema.Struct({ path: Schema.String, message: Schema.String })
export type IssueDetail = typeof IssueDetail.Type

/** Input that passed the schema but breaks a rule that needs state (an unknown user id, say). */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  message: Schema.String,
  details: Schema.Array(IssueDetail)
}) {}

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
export const invalidField = (path: string, message: string, where: "body" | "query" = "body"): InvalidInput =>
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
export class WindowClosed extends Schema.TaggedError<WindowClosed>()("WindowClosed", {}) {}

/** The plan's monthly message limit would be passed (docs/contract-messaging.md §10). */
export class LimitReached extends Schema.TaggedError<LimitReached>()("LimitReached", {
  used: Schema.Number,
  limit: Schema.Number,
  plan: Schema.String
}) {}

/** A status move its machine does not allow (docs/contract-commerce-ai.md §3): `allowed` are the moves it does. */
export class InvalidTransition extends Schema.TaggedError<InvalidTransition>()("InvalidTransition", {
  field: Schema.String,
  from: Schema.String,
  to: Schema.String,
  allowed: Schema.Array(Schema.String)
}) {}

/** An order line asks more than a tracked product has; nothing was taken. */
export class InsufficientStock extends Schema.TaggedError<InsufficientStock>()("InsufficientStock", {
  sku: Schema.String,
  available: Schema.Number,
  requested: Schema.Number
}) {}

/** `If-Match` names a version the resource no longer has (RFC 9110 §13.1.1); nothing changed. */
export class PreconditionFailed extends Schema.TaggedError<PreconditionFailed>()("PreconditionFailed", {
  current: Schema.Number
}) {}

/**
 * The language-model provider answered with an error or with output that cannot be used
 * (docs/contract-commerce-ai.md §1: 502 `ai_provider_error`). `message` is for the log, never the wire:
 * a provider's body may echo the prompt or the key.
 */
export class AiProviderError extends Schema.TaggedError<AiProviderError>()("AiProviderError", {
  message: Schema.String
}) {}

/** The provider did not answer within the configured time (504 `ai_provider_timeout`). */
export class AiProviderTimeout extends Schema.TaggedError<AiProviderTimeout>()("AiProviderTimeout", {
  timeoutMs: Schema.Number
}) {}

export class IdempotencyInProgress extends Schema.TaggedError<IdempotencyInProgress>()("IdempotencyInProgress", {}) {}

export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {}) {}

const DOMAIN_ERRORS = [
  Unauthenticated,
  PermissionDenied,
  NotFound,
  Conflict,
  InvalidInput,
  IdempotencyInProgress,
  IdempotencyKeyReused,
  WindowClosed,
  LimitReached,
  InvalidTransition,
  InsufficientStock,
  PreconditionFailed,
  AiProviderError,
  AiProviderTimeout
] as const

/** Whether a failure is one of the domain errors above (by class, not by tag: wire errors reuse some tags). */
export const isDomainError = (u: unknown): u is DomainError => DOMAIN_ERRORS.some((error) => u instanceof error)

export type DomainError =
  | Unauthenticated
  | PermissionDenied
  | NotFound
  | Conflict
  | InvalidInput
  | IdempotencyInProgress
  | IdempotencyKeyReused
  | WindowClosed
  | LimitReached
  | InvalidTransition
  | InsufficientStock
  | PreconditionFailed
  | AiProviderError
  | AiProviderTimeout

/**
 * A store could not be reached (the database is down or the network to it is
 * cut). Adapters raise it as a defect; the transport answers 503 and the
 * caller may retry. Not a `DomainError`: nothing the caller did caused it.
 */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  message: Schema.String
}) {}
