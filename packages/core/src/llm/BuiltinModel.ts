import { Effect } from "effect"
import type { Completion, CompletionRequest } from "./AiModel.ts"

/** How long the builtin model's reply may be (docs/contract-commerce-ai.md §6). */
export const MAX_REPLY_CHARS = 600

export const NAME = "retrieval-v1"

const ELLIPSIS = "…"

/**
 * What the builtin model says for a passage: the highlighted fragment (the headline, without its
 * `<b>` marks) widened to the whole sentences it lies in, within the passage (the chunk without its
 * `Section:` line), at most 600 characters, with `…` where it still cuts into the passage.
 */
export const quoted = (headline: string, text: string): string => {
  const plain = headline.replace(/<\/?b>/g, "").trim()
  if (plain.length === 0) return ""
  const passage = text.replace(/^Section: [^\n]*\n\n/, "")
  const at = passage.indexOf(plain)
  let from = at
  let to = at + plain.length
  if (at !== -1) {
    // Back to the end of the sentence before, forward to the end of this one.
    while (from > 0 && !/[.!?\n]/.test(passage[from - 1]!)) from--
    while (to < passage.length && !/[.!?\n]/.test(passage[to - 1]!)) to++
    if (to - from > MAX_REPLY_CHARS) {
      from = at
      to = at + plain.length
    }
  }
  const body = at === -1 ? plain : passage.slice(from, to).trim()
  const cut = body.length > MAX_REPLY_CHARS ? `${body.slice(0, MAX_REPLY_CHARS - 1).trimEnd()}${ELLIPSIS}` : body
  const before = at > 0 && passage.slice(0, from).trim().length > 0 && !/[.!?\n]\s*$/.test(passage.slice(0, from))
  const after = at === -1 || (to < passage.length && !/[.!?]$/.test(cut))
  return `${before ? ELLIPSIS : ""}${cut}${after && !cut.endsWith(ELLIPSIS) ? ELLIPSIS : ""}`
}

/**
 * The default model, with no network and no weights (docs/contract-commerce-ai.md §6): its reply is the
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
