import { existsSync, readFileSync } from "node:fs"
import { Config, Effect, Option, Redacted, Schema } from "effect"
import { fileIn } from "../AdminTokenFile.ts"
import { describe } from "./ErrorText.ts"

/**
 * The operator API over global fetch: finds the admin token the way the server
 * does and turns every failure into an error that says what to do about it.
 * The token is kept redacted; errors name where it came from, never its value.
 */

export const DEFAULT_URL = "http://localhost:3000"
const TIMEOUT = "30 seconds"

export class MissingAdminToken extends Schema.TaggedError<MissingAdminToken>()("MissingAdminToken", {
  file: Schema.String,
  reason: Schema.String
}) {}

export class InvalidUrl extends Schema.TaggedError<InvalidUrl>()("InvalidUrl", { url: Schema.String }) {}

export class ServerUnreachable extends Schema.TaggedError<ServerUnreachable>()("ServerUnreachable", {
  url: Schema.String,
  reason: Schema.String
}) {}

/** The server answered with its error body: `{error, code, details?}`. */
export class ServerError extends Schema.TaggedError<ServerError>()("ServerError", {
  status: Schema.Number,
  error: Schema.String,
  code: Schema.String,
  details: Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String })),
  tokenSource: Schema.String
}) {}

/** Something answered, but not with the operator API's JSON (a proxy page, another service). */
export class UnexpectedAnswer extends Schema.TaggedError<UnexpectedAnswer>()("UnexpectedAnswer", {
  url: Schema.String,
  status: Schema.Number,
  reason: Schema.String
}) {}

export type OperatorError = MissingAdminToken | InvalidUrl | ServerUnreachable | ServerError | UnexpectedAnswer

export interface Credential {
  readonly token: Redacted.Redacted<string>
  /** Said in errors when the server refuses the token. */
  readonly source: string
}

/** `LEADLINE_ADMIN_TOKEN`, else `<LEADLINE_DATA_DIR or ./data>/admin-token`, trimmed. */
export const adminCredential: Effect.Effect<Credential, MissingAdminToken | Config.ConfigError> = Effect.gen(
  function* () {
    const fromEnv = yield* Config.option(Config.Redacted("LEADLINE_ADMIN_TOKEN"))
    const token = Option.map(fromEnv, (value) => Redacted.value(value).trim())
    if (Option.isSome(token) && token.value !== "") {
      return { token: Redacted.make(token.value), source: "LEADLINE_ADMIN_TOKEN" }
    }
    const file = fileIn(yield* Config.String("LEADLINE_DATA_DIR").pipe(Config.withDefault("./data")))
    if (!existsSync(file)) {
      return yield* new MissingAdminToken({
        file,
        reason: "LEADLINE_ADMIN_TOKEN is not set and the file does not exist"
      })
    }
    const content = yield* Effect.try({
      try: () => readFileSync(file, "utf8").trim(),
      catch: (cause) => new MissingAdminToken({ file, reason: `could not read the file (${describe(cause)})` })
    })
    if (content === "") {
      return yield* new MissingAdminToken({ file, reason: "LEADLINE_ADMIN_TOKEN is not set and the file is empty" })
    }
    return { token: Redacted.make(content), source: file }
  }
)

export interface Target {
  readonly baseUrl: string
  readonly credential: Credential
}

/** Checks the URL up front so a typo is reported as such, not as an unreachable server. */
export const target = (url: string): Effect.Effect<Target, OperatorError | Config.ConfigError> =>
  Effect.gen(function* () {
    const parsed = URL.parse(url)
    if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
      return yield* new InvalidUrl({ url })
    }
    return { baseUrl: parsed.href.replace(/\/+$/, ""), credential: yield* adminCredential }
  })

export interface Answer {
  /** The body exactly as the server sent it, for `--json`. */
  readonly text: string
  readonly body: unknown
}

export interface Request {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE"
  readonly path: string
  readonly body?: unknown
  /** A body that is not JSON (a file to import), sent as it is with its type. */
  readonly raw?: { readonly body: string; readonly contentType: string } | undefined
  /** An account's API key to call the API with, instead of the admin token (the operator API). */
  readonly apiKey?: Redacted.Redacted<string> | undefined
}

/** Sends one operator request; a 2xx JSON answer succeeds, anything else fails with why. */
export const send = (to: Target, request: Request): Effect.Effect<Answer, OperatorError> => {
  const url = `${to.baseUrl}${request.path}`
  const headers: Record<string, string> = {
    Authorization: `Bearer ${Redacted.value(request.apiKey ?? to.credential.token)}`
  }
  if (request.body !== undefined) headers["Content-Type"] = "application/json"
  if (request.raw !== undefined) headers["Content-Type"] = request.raw.contentType
  return Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, {
        method: request.method,
        headers,
        signal,
        ...(request.raw !== undefined
          ? { body: request.raw.body }
          : request.body === undefined
            ? {}
            : { body: JSON.stringify(request.body) })
      })
      return { status: response.status, text: await response.text() }
    },
    catch: (cause) => new ServerUnreachable({ url: to.baseUrl, reason: describe(cause) })
  }).pipe(
    Effect.timeoutOrElse({
      duration: TIMEOUT,
      orElse: () => Effect.fail(new ServerUnreachable({ url: to.baseUrl, reason: `no answer within ${TIMEOUT}` }))
    }),
    Effect.flatMap(({ status, text }) => interpret(url, status, text, to.credential.source))
  )
}

const WireError = Schema.Struct({
  error: Schema.String,
  code: Schema.String,
  details: Schema.optional(Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String })))
})

const interpret = (
  url: string,
  status: number,
  text: string,
  tokenSource: string
): Effect.Effect<Answer, UnexpectedAnswer | ServerError> => {
  const body = parseJson(text)
  if (Option.isNone(body)) {
    return Effect.fail(new UnexpectedAnswer({ url, status, reason: "the body is not JSON" }))
  }
  if (status >= 200 && status < 300) return Effect.succeed({ text: text.trim(), body: body.value })
  const wire = Schema.decodeUnknownOption(WireError)(body.value)
  if (Option.isNone(wire)) {
    return Effect.fail(new UnexpectedAnswer({ url, status, reason: "the body is not a Leadline error" }))
  }
  return Effect.fail(
    new ServerError({
      status,
      error: wire.value.error,
      code: wire.value.code,
      details: wire.value.details ?? [],
      tokenSource
    })
  )
}

const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(text))
  } catch {
    return Option.none()
  }
}
