import { Effect } from "effect"
import * as Hook from "../Hook.ts"
import { QueueExits } from "../messages/QueueExits.ts"
import { CampaignProgress } from "./CampaignProgress.ts"

/** A campaign follows its messages out of the queue: started, completed, or failed on its template. */
export const followMessages = Hook.on(
  QueueExits,
  "campaigns",
  Effect.map(
    CampaignProgress,
    (progress) =>
      ({ accountId, touched }) =>
        progress.advance(accountId, touched)
  )
)
