import { Effect } from "effect"
import type { Completion, CompletionRequest } from "./AiModel.ts"

/** How long the builtin model's reply may be (CONTRACT-COMMERCE-AI §6). */
export const MAX_REPLY_CHARS = 600

export const NAME = "retrieval-v1"

const ELLIPSIS = "…"

/** The headline without its `<b>` marks, and `…` where it cuts into the passage (the chunk without its `Section:` line). */
export const quoted = (headline: string, text: string): string => {
  const plain = headline.replace(/<\/?b>/g, "").trim()
  if (plain.length === 0) return ""
  const passage = text.replace(/^Section: [^\n]*\n\n/, "")
  const at = passage.indexOf(plain)
  const body = plain.length > MAX_REPLY_CHARS ? `${plain.slice(0, MAX_REPLY_CHARS - 1).trimEnd()}${ELLIPSIS}` : plain
  const cutAfter = at === -1 || at + plain.length < passage.length
  return `${at > 0 ? ELLIPSIS : ""}${body}${cutAfter && !body.endsWith(ELLIPSIS) && !/[.!?]$/.test(body) ? ELLIPSIS : ""}`
}

/**
 * The default model, with no network and no weights (CONTRACT-COMMERCE-AI §6): its reply is the
 * best passage's highlighted fragment, quoted, so it never says what the knowledge base does not.
 * Without a passage it answers the hand-off marker. It ignores instructions, history and temperature.
 */
export const complete = (request: CompletionRequest): Effect.Effect<Completion> =>
  Effect.sync(() => {
    const best = request.snippets[0]
    const text = best === undefined ? "" : quoted(best.headline, best.text)
    return {
      text: text.length === 0 ? "HANDOFF" : text,
      finishReason: "extractive",
      usage: { inputTokens: null, outputTokens: null },
      model: { provider: "builtin", name: NAME }
    }
  })
