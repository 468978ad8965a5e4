import { Context, Effect, Schema } from "effect"

/** The page as text, and whether it is markdown (headings make sections) or plain text (HTML converted). */
export interface FetchedPage {
  readonly kind: "text" | "markdown"
  readonly text: string
}

/** Why a page could not be had: said on the source as its `error`. */
export class FetchFailed extends Schema.TaggedError<FetchFailed>()("FetchFailed", { message: Schema.String }) {}

/** The limits of a fetch (docs/contract-commerce-ai.md §4). */
export const MAX_PAGE_BYTES = 2 * 1024 * 1024
export const FETCH_TIMEOUT_MILLIS = 10_000
export const MAX_REDIRECTS = 3

/**
 * Fetches a `url` source's page (docs/contract-commerce-ai.md §4): https only (http and private addresses
 * where the deployment allows them), checked again at connect and at every redirect, at most
 * 3 redirects, 2 MiB and 10 s, HTML, plain text or markdown. A port: the check at connect needs the
 * platform's sockets (the webhook worker's guarded lookup); without an adapter, fetching fails.
 */
export interface PageFetcher {
  readonly fetch: (url: string) => Effect.Effect<FetchedPage, FetchFailed>
}

export const PageFetcher: Context.Reference<PageFetcher> = Context.Reference<PageFetcher>("core/PageFetcher", {
  defaultValue: () => ({
    fetch: () =>
      Effect.fail(new FetchFailed({ message: "this server cannot fetch web pages (no page fetcher is configured)" }))
  })
})
