import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import {
  FETCH_TIMEOUT_MILLIS,
  FetchFailed,
  type FetchedPage,
  MAX_PAGE_BYTES,
  MAX_REDIRECTS,
  PageFetcher
} from "@leadline/core/knowledge/PageFetcher"
import { isIpLiteral, isPublicAddress } from "@leadline/core/outbound/Addresses"
import { problemWith } from "@leadline/core/outbound/UrlPolicy"
import { Effect, Layer, Stream } from "effect"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { convert } from "html-to-text"
import * as GuardedLookup from "./GuardedLookup.ts"

/**
 * Fetches knowledge pages (docs/contract-commerce-ai.md §4) with the webhook sender's guard: the URL's rules
 * at every hop (https, no credentials, no private hosts unless allowed), the addresses checked at
 * connect (a name that resolves to a private address is refused, so DNS cannot rebind it), redirects
 * followed by hand (at most 3, each checked again), the whole exchange in 10 s, at most 2 MiB read.
 */

const failed = (message: string) => new FetchFailed({ message })

const decoder = new TextDecoder()

/** The body, read until it passes the limit: a page over 2 MiB is refused without reading the rest. */
const readCapped = (response: HttpClientResponse.HttpClientResponse) =>
  response.stream.pipe(
    Stream.runFoldEffect(
      () => ({ size: 0, parts: [] as Array<Uint8Array> }),
      (acc, part: Uint8Array) => {
        const size = acc.size + part.length
        if (size > MAX_PAGE_BYTES)
          return Effect.fail(failed(`the page is larger than ${MAX_PAGE_BYTES / 1024 / 1024} MiB`))
        acc.parts.push(part)
        return Effect.succeed({ size, parts: acc.parts })
      }
    ),
    Effect.map(({ parts }) => decoder.decode(Buffer.concat(parts))),
    Effect.mapError((error) =>
      error instanceof FetchFailed ? error : failed(`the page could not be read: ${error.message}`)
    )
  )

/** The page's text by its type: HTML converted to text, plain text and markdown as they are. */
export const pageOf = (contentType: string, body: string): FetchedPage | undefined => {
  const type = contentType.split(";")[0]!.trim().toLowerCase()
  if (type === "text/html" || type === "application/xhtml+xml") {
    return {
      kind: "text",
      text: convert(body, {
        wordwrap: false,
        selectors: [
          { selector: "a", options: { ignoreHref: true } },
          { selector: "img", format: "skip" },
          { selector: "nav", format: "skip" },
          { selector: "script", format: "skip" },
          { selector: "style", format: "skip" }
        ]
      })
    }
  }
  if (type === "text/markdown" || type === "text/x-markdown") return { kind: "markdown", text: body }
  if (type === "text/plain") return { kind: "text", text: body }
  return undefined
}

export const make = (options: { readonly allowPrivate: boolean }) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient

    const hop = (url: string): Effect.Effect<FetchedPage | { readonly redirect: string }, FetchFailed> =>
      Effect.gen(function* () {
        const problem = problemWith(url, { allowPrivate: options.allowPrivate })
        if (problem !== undefined) return yield* failed(`refused: ${problem}`)
        // An IP literal never goes through the guarded lookup, so it is checked here.
        const host = new URL(url).hostname.replace(/^\[|\]$/g, "")
        if (!options.allowPrivate && isIpLiteral(host) && !isPublicAddress(host)) {
          return yield* failed(`refused: ${host} is a private or internal address`)
        }
        const response = yield* client
          .execute(
            HttpClientRequest.get(url).pipe(
              HttpClientRequest.setHeader("accept", "text/html, text/markdown, text/plain")
            )
          )
          .pipe(
            Effect.mapError((error) => {
              const cause = (error.reason as { cause?: unknown }).cause
              const refused =
                cause instanceof Error &&
                /refused:/.test(`${cause.message} ${(cause as { cause?: Error }).cause?.message ?? ""}`)
              return failed(
                refused
                  ? "refused: the host resolves to a private or internal address"
                  : `the page could not be fetched: ${error.reason._tag}`
              )
            })
          )
        if (response.status >= 300 && response.status < 400) {
          const location = response.headers.location
          if (location === undefined) return yield* failed(`HTTP ${response.status} without a Location`)
          return { redirect: new URL(location, url).href }
        }
        if (response.status < 200 || response.status >= 300) return yield* failed(`HTTP ${response.status}`)
        const length = Number(response.headers["content-length"] ?? "0")
        if (length > MAX_PAGE_BYTES) return yield* failed(`the page is larger than ${MAX_PAGE_BYTES / 1024 / 1024} MiB`)
        const body = yield* readCapped(response)
        const page = pageOf(response.headers["content-type"] ?? "", body)
        if (page === undefined) {
          return yield* failed(
            `unsupported content type ${response.headers["content-type"] ?? "(none)"}: HTML, plain text or markdown only`
          )
        }
        return page
      }).pipe(Effect.scoped)

    const fetch = (url: string): Effect.Effect<FetchedPage, FetchFailed> =>
      Effect.gen(function* () {
        let next = url
        for (let redirects = 0; ; redirects++) {
          const result = yield* hop(next)
          if (!("redirect" in result)) return result
          if (redirects >= MAX_REDIRECTS) return yield* failed(`more than ${MAX_REDIRECTS} redirects`)
          next = result.redirect
        }
      }).pipe(
        Effect.timeoutOrElse({
          duration: FETCH_TIMEOUT_MILLIS,
          orElse: () => Effect.fail(failed(`no answer within ${FETCH_TIMEOUT_MILLIS / 1000} s`))
        }),
        Effect.provideService(HttpClient.TracerPropagationEnabled, false)
      )

    return { fetch } satisfies PageFetcher
  })

/** The fetcher with its own guarded connection pool; `allowPrivate` as the webhook sender's. */
export const layer = (options: { readonly allowPrivate: boolean }): Layer.Layer<never> =>
  Layer.unwrap(
    Effect.map(GuardedLookup.Resolver, (resolver) =>
      Layer.effect(PageFetcher, make(options)).pipe(
        Layer.provide(
          NodeHttpClient.layerUndiciOptions({
            connect: { lookup: GuardedLookup.make(resolver, options) },
            headersTimeout: FETCH_TIMEOUT_MILLIS,
            bodyTimeout: FETCH_TIMEOUT_MILLIS
          })
        )
      )
    )
  )
