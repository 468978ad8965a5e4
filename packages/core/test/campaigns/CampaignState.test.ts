import { assert, describe, it } from "@effect/vitest"
import { type CampaignStatus, isEditable, type Move, next } from "../../src/campaigns/CampaignState.ts"

const ALL: ReadonlyArray<CampaignStatus> = ["draft", "queued", "sending", "completed", "failed", "cancelled"]
const MOVES: ReadonlyArray<Move> = [
  { _tag: "Queue", nothingToSend: false },
  { _tag: "Queue", nothingToSend: true },
  { _tag: "Start" },
  { _tag: "Finish" },
  { _tag: "Fail" },
  { _tag: "Cancel" }
]
const label = (move: Move) => (move._tag === "Queue" && move.nothingToSend ? "Queue(empty)" : move._tag)

// The whole table of §8.2: every (state, move) pair, legal or not.
const EXPECTED: Record<CampaignStatus, Record<string, CampaignStatus | null>> = {
  draft: { Queue: "queued", "Queue(empty)": "completed", Start: null, Finish: null, Fail: null, Cancel: null },
  queued: {
    Queue: null,
    "Queue(empty)": null,
    Start: "sending",
    Finish: "completed",
    Fail: "failed",
    Cancel: "cancelled"
  },
  sending: { Queue: null, "Queue(empty)": null, Start: null, Finish: "completed", Fail: "failed", Cancel: "cancelled" },
  completed: { Queue: null, "Queue(empty)": null, Start: null, Finish: null, Fail: null, Cancel: null },
  failed: { Queue: null, "Queue(empty)": null, Start: null, Finish: null, Fail: null, Cancel: null },
  cancelled: { Queue: null, "Queue(empty)": null, Start: null, Finish: null, Fail: null, Cancel: null }
}

describe("campaign states (docs/contract-messaging.md §8.2)", () => {
  it("moves exactly as the table says, and refuses every other move", () => {
    for (const status of ALL) {
      for (const move of MOVES) {
        const outcome = next(status, move)
        const expected = EXPECTED[status][label(move)]
        assert.deepStrictEqual(outcome._tag === "Moved" ? outcome.status : null, expected, `${status} + ${label(move)}`)
      }
    }
  })

  it("says why a move is refused, in the words of the 409", () => {
    assert.deepStrictEqual(next("queued", { _tag: "Queue", nothingToSend: false }), {
      _tag: "Refused",
      message: "Campaign is not a draft"
    })
    assert.deepStrictEqual(next("completed", { _tag: "Cancel" }), {
      _tag: "Refused",
      message: "Campaign is already completed"
    })
  })

  it("lets only drafts be edited or deleted", () => {
    assert.deepStrictEqual(
      ALL.filter((status) => isEditable(status)),
      ["draft"]
    )
  })
})
