import { Context, type Effect } from "effect"

/** The fields of a message an inbox row's preview is made from (`previewText`, `LastMessage`). */
export interface SummarizedMessage {
  readonly id: string
  readonly direction: "inbound" | "outbound"
  readonly type: string
  readonly text: string | null
  readonly template: { readonly [key: string]: unknown } | null
  readonly media: { readonly filename?: string | null } | null
  readonly status: string
  readonly created_at: string
}

/** What an inbox row shows of a thread's messages (docs/contract-messaging.md §4.1). */
export interface ThreadSummary {
  /** The newest message (`created_at`, then `id`), campaign messages included. */
  readonly last: SummarizedMessage
  /** Inbound messages after the newest inbound one with `read_at` (all of them when none has). */
  readonly unread: number
}

/**
 * The store's answer to "what does the inbox show of these threads", for a page at once. A port
 * of its own, as `FirstResponses` is: it reads the messages, which live where the conversations
 * cannot import them.
 */
export class ThreadSummaries extends Context.Service<
  ThreadSummaries,
  {
    /** Each conversation's summary; none for a thread without messages. */
    readonly summaries: (
      accountId: string,
      conversationIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, ThreadSummary>>
  }
>()("core/ThreadSummaries") {}
