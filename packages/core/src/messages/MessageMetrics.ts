import { Effect, Schema } from "effect"
import * as Metrics from "../metrics/Metrics.ts"
import { type Counted, MessagesRepo } from "./MessagesRepo.ts"

export const MessagesSummary = Schema.Struct({
  inbound: Schema.Int.annotate({ description: "Messages received in the range" }),
  outbound: Schema.Int.annotate({
    description: "Messages created to send in the range that are not failed or cancelled (as metering counts them)"
  }),
  outbound_by_agent: Schema.Int.annotate({ description: "Of `outbound`, those an AI agent wrote" })
}).annotate({ identifier: "MessagesSummary" })

const created = (kind: Counted) => (accountId: string, bounds: ReadonlyArray<number>) =>
  MessagesRepo.use((repo) => repo.createdPerBucket(accountId, kind, bounds))

const total = (kind: Counted) => (accountId: string, window: ReadonlyArray<number>) =>
  Effect.map(created(kind)(accountId, window), ([n]) => n ?? 0)

export const metrics = Metrics.make({
  key: "messages",
  summary: MessagesSummary,
  summarize: (accountId, window) =>
    Effect.all(
      {
        inbound: total("inbound")(accountId, window),
        outbound: total("outbound")(accountId, window),
        outbound_by_agent: total("outbound_by_agent")(accountId, window)
      },
      { concurrency: "unbounded" }
    ),
  series: {
    messages_inbound: { description: "Messages received", values: created("inbound") },
    messages_outbound: {
      description: "Messages sent or to send, not failed or cancelled",
      values: created("outbound")
    },
    messages_outbound_by_agent: {
      description: "Outbound messages an AI agent wrote",
      values: created("outbound_by_agent")
    }
  }
})
