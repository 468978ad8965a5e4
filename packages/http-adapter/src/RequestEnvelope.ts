import { ByteSize, Cause, Context, Effect, Exit, Tracer } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApi, type HttpApiGroup } from "effect/http-api"
import { makeUnsafe as makeId } from "@leadline/core/Ids"
import { fromCause, rejection, toResponse } from "./ErrorMapping.ts"
import { IMPORT_UPLOAD, mediaType } from "./leads/LeadFiles.ts"
import * as HttpMetrics from "./observability/HttpMetrics.ts"
import { NotFound, ServiceUnavailable, UnsupportedMediaType } from "./WireErrors.ts"

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

/** The upload route's body: Meta's largest file (a 100 MiB document) and room for the form around it. */
export const DEFAULT_UPLOAD_MAX_BODY_BYTES = 101 * 1024 * 1024

/**
 * The one route whose body is a file (`POST /api/v1/media`): `multipart/form-data`, its own size
 * limit, and time enough for a large file on a slow link.
 */
export interface UploadRoute {
  readonly path: string
  readonly maxBodyBytes: number
  readonly timeoutSeconds: number
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"])

const isJson = (contentType: string | undefined) => {
  if (contentType === undefined) return false
  // Only application/json itself: the API decodes nothing else, so other +json types are 415 here too.
  return contentType.split(";", 1)[0]!.trim().toLowerCase() === "application/json"
}

export const tooLarge = (maxBytes: number) =>
  rejection({ status: 413, message: `The request body is over the limit of ${maxBytes} bytes` })

const notJson = toResponse(new UnsupportedMediaType({ error: "The request body must be application/json" }))

const notMultipart = toResponse(new UnsupportedMediaType({ error: "The request body must be multipart/form-data" }))

const isMultipart = (contentType: string | undefined) =>
  contentType !== undefined && contentType.split(";", 1)[0]!.trim().toLowerCase() === "multipart/form-data"

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

const noRoute = toResponse(new NotFound({ error: "No such route" }))

/**
 * `effect`, or `onTimeout` once it has run `millis`; `effect` is then interrupted.
 * What `Effect.timeoutOrElse` does, with one fiber and a plain timer instead of a
 * race of two fibers: it runs on every request.
 */
const deadline = <A, E, R>(effect: Effect.Effect<A, E, R>, millis: number, onTimeout: A): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.forkChild(effect, { startImmediately: true }), (fiber) =>
    Effect.callback<A, E>((resume) => {
      const timer = setTimeout(() => {
        // Answer first: interrupting the fiber reports its exit, which would resume us as interrupted.
        resume(Effect.succeed(onTimeout))
        fiber.interruptUnsafe()
      }, millis)
      fiber.addObserver((exit) => {
        clearTimeout(timer)
        resume(exit)
      })
      return Effect.sync(() => {
        clearTimeout(timer)
        fiber.interruptUnsafe()
      })
    })
  )

/**
 * Checks a body before anything reads it: over the limit is 413 (also while
 * streaming a chunked body), anything but JSON is 415; and bounds the time a
 * request may take. Applied to the API routes only, so an unknown route stays a 404.
 */
/** A route whose body is a file as it is rather than JSON (an import): its path, the types it takes, its own limit. */
export interface FileRoute {
  readonly path: string
  readonly types: ReadonlyArray<string>
  readonly maxBytes: number
}

/**
 * The methods of each API path without parameters. A path that is also a value of a sibling's parameter
 * (`/api/v1/leads/imports` beside `/api/v1/leads/:id`) answers a method it lacks "No such route", as any
 * path does, rather than reaching the sibling (`GET /api/v1/leads/imports` is no lead's read).
 */
export const staticMethods = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ReadonlyMap<string, ReadonlySet<string>> => {
  const methods = new Map<string, Set<string>>()
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      if (endpoint.path.includes(":")) return
      const own = methods.get(endpoint.path) ?? new Set<string>()
      own.add(endpoint.method)
      methods.set(endpoint.path, own)
    }
  })
  return methods
}

const ROUTED_METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"])

export const bodyGuard = (
  maxBodyBytes: number,
  timeoutSeconds: number,
  upload?: UploadRoute | undefined,
  ownMethods: ReadonlyMap<string, ReadonlySet<string>> = new Map(),
  files: ReadonlyArray<FileRoute> = [IMPORT_UPLOAD]
) => {
  const maxBodySize = ByteSize.bytes(maxBodyBytes)
  const timeoutMillis = timeoutSeconds * 1000
  const tooSlow = toResponse(new ServiceUnavailable({ error: `The request took longer than ${timeoutSeconds} s` }))
  const uploadTooSlow =
    upload === undefined
      ? tooSlow
      : toResponse(new ServiceUnavailable({ error: `The upload took longer than ${upload.timeoutSeconds} s` }))
  return HttpRouter.middleware((handler) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const path = pathOf(request.url)
      const own = ownMethods.get(path)
      if (own !== undefined && ROUTED_METHODS.has(request.method) && !own.has(request.method)) {
        return Effect.succeed(noRoute)
      }
      const file = request.method === "POST" ? files.find((route) => route.path === path) : undefined
      if (file !== undefined) {
        const length = request.headers["content-length"]
        if (length !== undefined && Number(length) > file.maxBytes) return Effect.succeed(tooLarge(file.maxBytes))
        if (!file.types.includes(mediaType(request.headers["content-type"]))) {
          return Effect.succeed(
            toResponse(new UnsupportedMediaType({ error: `The request body must be ${file.types.join(" or ")}` }))
          )
        }
        return deadline(
          Effect.provideService(handler, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(file.maxBytes)),
          timeoutMillis,
          tooSlow
        )
      }
      if (upload !== undefined && request.method === "POST" && path === upload.path) {
        const length = request.headers["content-length"]
        if (length !== undefined && Number(length) > upload.maxBodyBytes) {
          return Effect.succeed(tooLarge(upload.maxBodyBytes))
        }
        if (!isMultipart(request.headers["content-type"])) return Effect.succeed(notMultipart)
        return deadline(
          Effect.provideService(handler, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(upload.maxBodyBytes)),
          upload.timeoutSeconds * 1000,
          uploadTooSlow
        )
      }
      if (BODY_METHODS.has(request.method)) {
        const length = request.headers["content-length"]
        if (length !== undefined && Number(length) > maxBodyBytes) return Effect.succeed(tooLarge(maxBodyBytes))
        const contentType = request.headers["content-type"]
        const hasBody = (length !== undefined && length !== "0") || request.headers["transfer-encoding"] !== undefined
        // A declared type that is not JSON is refused even on an empty body: HttpApi would answer it in plain text.
        if ((hasBody || contentType !== undefined) && !isJson(contentType)) return Effect.succeed(notJson)
      }
      // Nothing waits forever: a stuck dependency frees the connection with a 503.
      return deadline(
        Effect.provideService(handler, HttpIncomingMessage.MaxBodySize, maxBodySize),
        timeoutMillis,
        tooSlow
      )
    })
  ).layer
}

/**
 * Headers that something deep in a request (the rate limiter) wants on its
 * answer, whatever that answer turns out to be: HttpApi encodes errors after the
 * middlewares have run, so they cannot add headers to them themselves.
 */
export const ResponseHeaders = Context.Reference<Record<string, string> | undefined>("leadline/ResponseHeaders", {
  defaultValue: () => undefined
})

const withHeaders = (response: HttpServerResponse.HttpServerResponse, extra: Record<string, string>) =>
  Object.keys(extra).length === 0 ? response : HttpServerResponse.setHeaders(response, extra)

const withRequestId = (response: HttpServerResponse.HttpServerResponse, requestId: string) =>
  // HttpApi encodes the 401 of the auth middleware itself; the challenge header is added here.
  response.status === 401
    ? HttpServerResponse.setHeaders(response, { "x-request-id": requestId, "www-authenticate": "Bearer" })
    : HttpServerResponse.setHeader(response, "x-request-id", requestId)

/**
 * The outermost layer of every response: an `X-Request-Id`, and a JSON error body
 * for whatever escaped the routes (unknown route, unreadable body, a defect).
 * Unexpected failures are logged with the request id; the caller sees a generic 500.
 * Written without generators: it runs on every request. With `metrics`, it records each
 * answer's route, method, status and time (`HttpMetrics`).
 */
export const envelope = (options: { readonly metrics: boolean }) =>
  HttpRouter.middleware(
    (handler) =>
      Effect.withFiber((fiber) => {
        const requestId = makeId("req")
        // With tracing on, the server's span of the request carries the id its answer and log lines carry.
        const span = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
        if (span?._tag === "Span") span.attribute("http.request_id", requestId)
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const url = request.url
        const labels: HttpMetrics.Labels | undefined = options.metrics
          ? { route: "unmatched", record: true }
          : undefined
        // The router ends a path at ";" (matrix parameters), which would serve /leads/;x as the list.
        const query = url.indexOf("?")
        const answered =
          url.lastIndexOf(";", query === -1 ? url.length : query) !== -1
            ? Effect.succeed(withRequestId(noRoute, requestId))
            : answer(handler, requestId, labels)
        if (labels === undefined) return answered
        const context = fiber.context as Context.Context<never>
        const started = performance.now()
        HttpMetrics.inFlight.modifyUnsafe(1, context)
        // An observer of the request's fiber rather than an effect around it: no allocation per request.
        fiber.addObserver((exit) => {
          HttpMetrics.inFlight.modifyUnsafe(-1, context)
          const response = Exit.isSuccess(exit) ? exit.value : undefined
          if (HttpServerResponse.isHttpServerResponse(response))
            HttpMetrics.record(context, labels, request.method, response.status, (performance.now() - started) / 1000)
        })
        return answered
      }),
    { global: true }
  )

const answer = <E, R>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  requestId: string,
  labels: HttpMetrics.Labels | undefined
) => {
  const extra: Record<string, string> = {}
  const provided = Effect.provideService(handler, ResponseHeaders, extra)
  return Effect.matchCauseEffect(
    labels === undefined ? provided : Effect.provideService(provided, HttpMetrics.CurrentLabels, labels),
    {
      onSuccess: (response) => Effect.succeed(withHeaders(withRequestId(response, requestId), extra)),
      onFailure: (cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.flatMap(fromCause(cause), ({ error, expected }) =>
              Effect.as(
                expected
                  ? Effect.void
                  : Effect.logError("request failed", cause).pipe(Effect.annotateLogs({ request_id: requestId })),
                withHeaders(withRequestId(toResponse(error), requestId), extra)
              )
            )
    }
  )
}
