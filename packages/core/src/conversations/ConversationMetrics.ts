import { Effect, Schema } from "effect"
import * as Metrics from "../metrics/Metrics.ts"
import { ConversationsRepo } from "./ConversationsRepo.ts"
import { FirstResponses } from "./FirstResponses.ts"

const Seconds = Schema.NullOr(Schema.Int)

export const ConversationsSummary = Schema.Struct({
  started: Schema.Int.annotate({ description: "Conversations whose first message (either direction) is in the range" }),
  first_response_seconds: Schema.Struct({
    count: Schema.Int.annotate({ description: "Conversations first written to in the range that got an answer" }),
    avg: Seconds,
    p50: Seconds,
    p90: Seconds
  }).annotate({
    description:
      "For each conversation whose first inbound message is in the range, the seconds to the first outbound message created after it, whatever became of that message later; null when none was answered"
  })
}).annotate({ identifier: "ConversationsSummary" })

export const metrics = Metrics.make({
  key: "conversations",
  summary: ConversationsSummary,
  summarize: (accountId, window) =>
    Effect.all(
      {
        started: ConversationsRepo.use((repo) => repo.createdPerBucket(accountId, window)).pipe(
          Effect.map(([n]) => n ?? 0)
        ),
        first_response_seconds: FirstResponses.use((port) => port.stats(accountId, window))
      },
      { concurrency: "unbounded" }
    ),
  series: {}
})
